package canon

// MaxIDLen bounds an id: a cell id, a slot, mailbox or transport name, a
// capability class.
const MaxIDLen = 64

// IsID reports whether s is a lowercase kebab id: a letter a-z, then
// letters, digits and '-', at most MaxIDLen bytes. Such an id holds no
// '/', '.' or '\\', so it is also a safe file name.
func IsID(s string) bool {
	if s == "" || len(s) > MaxIDLen || s[0]-'a' >= 26 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !idBytes[s[i]] {
			return false
		}
	}
	return true
}

// idBytes marks the bytes an id may hold after its first letter.
var idBytes = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyz0123456789-") {
		t[c] = true
	}
	return t
}()
