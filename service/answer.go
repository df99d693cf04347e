package service

import "sync"

// Answer is a rendered answer kept between requests, with the encodings
// made of it (compressed, for the clients that accept them), so a kept
// answer is compressed once rather than at every request.
type Answer struct {
	Body []byte

	mu      sync.Mutex
	encoded map[string][]byte
}

// Encoded returns the answer under the encoding name, made by encode the
// first time and kept with the answer after. An error is not kept.
func (a *Answer) Encoded(name string, encode func([]byte) ([]byte, error)) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.encoded[name]; ok {
		return b, nil
	}
	b, err := encode(a.Body)
	if err != nil {
		return nil, err
	}
	if a.encoded == nil {
		a.encoded = map[string][]byte{}
	}
	a.encoded[name] = b
	return b, nil
}
