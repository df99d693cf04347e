package main

import (
	"os"
	"strconv"
	"time"
)

// env returns the environment variable name, or def when it is unset or empty.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		fatalf("%s: %q is not a duration (say 5s, 250ms)", name, v)
	}
	return def
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		fatalf("%s: %q is not an integer", name, v)
	}
	return def
}

// defaultDatabaseURL is the local server the README's commands use.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/cnpjgraph?sslmode=disable"

func databaseURL() string { return env("DATABASE_URL", defaultDatabaseURL) }
