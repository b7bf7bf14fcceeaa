//go:build !linux

package store

// installNew links the temporary file tmp to path unless path exists
// (linkNew); tmp stays for the caller to remove.
func installNew(tmp, path string) (installed, moved bool, err error) {
	installed, err = linkNew(tmp, path)
	return installed, false, err
}
