package rest

import "net/http"

// Compress is the compress middleware, for the benchmark of its cost.
func Compress(h http.Handler) http.Handler { return compress()(h) }
