package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/config/configtest"
)

// TestInvalidValues: each variable with a wrong value fails Load with a
// message naming it.
func TestInvalidValues(t *testing.T) {
	for _, v := range config.Variables() {
		bad, ok := configtest.InvalidValue(v)
		if !ok {
			if !slices.Contains(configtest.FreeText, v.Name) {
				t.Errorf("%s: no invalid value to test it with, and not free text", v.Name)
			}
			continue
		}
		_, err := config.Load([]string{v.Name + "=" + bad})
		if err == nil || !strings.HasPrefix(err.Error(), v.Name+": ") {
			t.Errorf("%s=%q: %v", v.Name, bad, err)
		}
	}
}
