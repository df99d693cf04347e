package main

import (
	"net/http"
	"net/http/pprof"
)

// pprofMux serves the runtime profiles (PPROF_ADDR).
func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
