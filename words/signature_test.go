package words

import (
	"fmt"
	"math/bits"
	"testing"
)

// The bits of a word are stored with every snapshot: these must never
// change (see Signature).
func TestSignatureIsStable(t *testing.T) {
	for w, want := range map[string]uint64{
		"serpro":        0x8100000000000000,
		"processamento": 0x0400000010000000,
		"jose":          0x0000100000000080,
	} {
		if got := Signature([]string{w}); got != want {
			t.Errorf("Signature(%q) = %#016x, want %#016x", w, got, want)
		}
	}
}

// A name's signature holds the signature of every subset of its words, and
// a word sets one or two bits.
func TestSignatureHoldsEveryWord(t *testing.T) {
	name := Of("SERVIÇO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)")
	all := Signature(name)
	for _, w := range name {
		s := Signature([]string{w})
		if n := bits.OnesCount64(s); n < 1 || n > 2 {
			t.Errorf("%q sets %d bits", w, n)
		}
		if all&s != s {
			t.Errorf("the name's signature %x lacks %q's %x", all, w, s)
		}
	}
	if Signature(nil) != 0 {
		t.Error("no words, some bits")
	}
}

// The bits spread: over 20,000 words each bit is set by about 2/64 of
// them, and a one-word value's signature is held by about 1 in 64×64/2 other
// single words' (a name of six words holds it about 3 % of the time).
func TestSignatureSpreads(t *testing.T) {
	const n = 20000
	var counts [64]int
	falses := 0
	query := Signature([]string{"cooperativa"})
	for i := range n {
		s := Signature([]string{fmt.Sprintf("w%05d", i)})
		for b := range 64 {
			if s&(1<<b) != 0 {
				counts[b]++
			}
		}
		six := Signature([]string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i), fmt.Sprintf("c%d", i),
			fmt.Sprintf("d%d", i), fmt.Sprintf("e%d", i), fmt.Sprintf("f%d", i)})
		if six&query == query {
			falses++
		}
	}
	for b, c := range counts {
		if c < n*2/64/2 || c > n*2/64*2 {
			t.Errorf("bit %d set by %d of %d words, want about %d", b, c, n, n*2/64)
		}
	}
	if falses > n*6/100 {
		t.Errorf("%d of %d six-word names hold a word they lack, want about 3 %%", falses, n)
	}
}
