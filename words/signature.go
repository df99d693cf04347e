package words

// Signature is a 64-bit Bloom filter of words: each word sets two of its
// bits, picked by a hash of the word. A name holds every word of a search
// value only if its signature holds the value's, so a search can pass over
// the rows whose signature does not without reading their names: a state's
// offices walked in key order for a word of a few thousand companies are
// 96 % such rows (see db.OfficeSignaturesSQL). The importer stores the
// signatures with each snapshot, so the bits of a word never change: a
// change here needs every snapshot imported again.
func Signature(ws []string) uint64 {
	var s uint64
	for _, w := range ws {
		s |= wordBits(w)
	}
	return s
}

// wordBits are a word's two bits: its 64-bit FNV-1a hash, mixed by
// MurmurHash3's finalizer (FNV's low bits depend on the input's low bits
// alone), gives two 6-bit positions, which may coincide.
func wordBits[T string | []byte](w T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return 1<<(h>>58) | 1<<((h>>52)&63)
}
