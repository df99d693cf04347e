package cnpj

import "testing"

// FuzzParse checks that Parse never panics, never accepts a string whose check
// digits are wrong, and accepts every string built with the right ones.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"33683111000280", "12ABC34501DE35", "", "00000000000000", "ZZZZZZZZZZZZ00", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if c != "" {
				t.Fatalf("Parse(%q) returned %q with an error", s, c)
			}
		} else {
			if len(s) != Length {
				t.Fatalf("accepted %q of length %d", s, len(s))
			}
			d1, d2 := CheckDigits(s[:12])
			if s[12] != d1 || s[13] != d2 {
				t.Fatalf("accepted %q with wrong check digits (want %c%c)", s, d1, d2)
			}
		}
		// Any 12 valid characters with their computed digits must be accepted.
		if len(s) >= 12 {
			base := []byte(s[:12])
			for i, b := range base {
				if !(b >= '0' && b <= '9' || b >= 'A' && b <= 'Z') {
					base[i] = '0' + b%10
				}
			}
			built := Build(string(base[:8]), string(base[8:12]))
			if _, err := Parse(string(built)); err != nil {
				t.Fatalf("Build(%q) = %q rejected: %v", base, built, err)
			}
		}
	})
}
