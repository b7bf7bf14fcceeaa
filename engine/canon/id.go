package canon

// MaxIDLen bounds an id: a cell id, a slot, mailbox or transport name, a
// capability class.
const MaxIDLen = 64

// IsID reports whether s is a lowercase kebab id: a letter a-z, then
// letters, digits and '-', at most MaxIDLen bytes. Such an id holds no
// '/', '.' or '\\', so it is also a safe file name.
func IsID(s string) bool {
	if s == "" || len(s) > MaxIDLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
