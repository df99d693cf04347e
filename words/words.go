// Package words turns names into the words a name search matches: lower
// case, accents dropped, split on everything but letters and digits. The
// importer stores each name's words and the search turns its values into
// words with the same function, so both sides always agree.
//
//	"SERVIÇO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)"
//	→ servico federal de processamento dados serpro
package words

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Append appends the distinct words of s to dst, in order of first
// appearance.
func Append(dst []string, s string) []string {
	start := len(dst)
	var word []byte
	flush := func() {
		if len(word) == 0 {
			return
		}
		for _, w := range dst[start:] {
			if w == string(word) {
				word = word[:0]
				return
			}
		}
		dst = append(dst, string(word))
		word = word[:0]
	}
	for _, r := range s {
		if c, ok := fold(r); ok {
			word = append(word, c)
			continue
		}
		flush()
	}
	flush()
	return dst
}

// Of returns the distinct words of s.
func Of(s string) []string { return Append(nil, s) }

// AppendArray appends the words of name as a PostgreSQL text[] literal
// ({"a","b"}) and reports whether there was any: the importer's COPY
// writes it as the name's words column. sig is the words' Signature.
func AppendArray(dst, name []byte) (out []byte, sig uint64, ok bool) {
	n := 0
	inWord := false
	wordStart := 0
	start := len(dst)
	dst = append(dst, '{')
	for i := 0; i <= len(name); {
		r := ' '
		size := 1
		if i < len(name) {
			r, size = utf8.DecodeRune(name[i:])
		}
		c, ok := fold(r)
		if i == len(name) {
			ok = false
		}
		switch {
		case ok && !inWord:
			inWord = true
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			wordStart = len(dst)
			dst = append(dst, c)
		case ok:
			dst = append(dst, c)
		case inWord:
			inWord = false
			if seen(dst[start+1:wordStart-1], dst[wordStart:]) {
				// A repeated word: take it back with its separator.
				cut := wordStart - 1
				if n > 0 {
					cut--
				}
				dst = dst[:cut]
			} else {
				sig |= wordBits(dst[wordStart:])
				dst = append(dst, '"')
				n++
			}
		}
		i += size
	}
	if n == 0 {
		return dst[:start], 0, false
	}
	return append(dst, '}'), sig, true
}

// seen reports whether word is one of the quoted, comma-separated words in
// list.
func seen(list, word []byte) bool {
	for len(list) > 0 {
		// list is "w1","w2",...
		end := 1
		for end < len(list) && list[end] != '"' {
			end++
		}
		if string(list[1:end]) == string(word) {
			return true
		}
		list = list[min(end+2, len(list)):]
	}
	return false
}

// fold maps a letter or digit to its lower-case ASCII letter or digit, and
// reports false for anything else (a separator).
func fold(r rune) (byte, bool) {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return byte(r), true
	case r >= 'A' && r <= 'Z':
		return byte(r) + 'a' - 'A', true
	case r >= 0xC0 && r <= 0xFF:
		if c := latin1[r-0xC0]; c != 0 {
			return c, true
		}
	}
	return 0, false
}

// latin1 folds À..ÿ; 0 is a separator (×, ÷).
var latin1 = [64]byte{
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'c', 'e', 'e', 'e', 'e', 'i', 'i', 'i', 'i', // À..Ï (Æ → a)
	'd', 'n', 'o', 'o', 'o', 'o', 'o', 0, 'o', 'u', 'u', 'u', 'u', 'y', 0, 's', // Ð..ß (Þ separator)
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'c', 'e', 'e', 'e', 'e', 'i', 'i', 'i', 'i', // à..ï
	'd', 'n', 'o', 'o', 'o', 'o', 'o', 0, 'o', 'u', 'u', 'u', 'u', 'y', 0, 'y', // ð..ÿ
}

// Upper is s trimmed, upper-cased and without accents, other characters
// kept: how free address text ("Rua São João") compares with the
// registry's ("RUA SAO JOAO").
func Upper(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range strings.TrimSpace(s) {
		if c, ok := fold(r); ok {
			r = rune(c)
		}
		out = append(out, unicode.ToUpper(r))
	}
	return string(out)
}
