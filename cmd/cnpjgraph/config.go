package main

import "github.com/cnpjgraph/cnpjgraph/config"

// loadConfig reads the one configuration, exiting with a message that
// names the variable when a value is invalid.
func loadConfig() config.Config {
	c, err := config.Load(nil)
	if err != nil {
		fatalf("configuration: %v", err)
	}
	return c
}

func databaseURL() string { return loadConfig().DatabaseURL }
