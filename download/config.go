// Package download fetches the Receita Federal's monthly CNPJ dump from its
// public Nextcloud share over WebDAV: it lists the months, downloads a
// month's 37 ZIPs in parallel with resume, retries and integrity checks, and
// (Sync) imports the newest month when it is newer than the live snapshot.
package download

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// Config is the download's part of the configuration (config.Config
// embeds it and validates it with Validate).
type Config struct {
	// ShareURL is the public share: https://HOST/index.php/s/TOKEN (or
	// https://HOST/s/TOKEN), or the WebDAV endpoint with the token as user,
	// https://TOKEN@HOST/public.php/webdav.
	ShareURL     string        `env:"RFB_SHARE_URL" envDefault:"https://arquivos.receitafederal.gov.br/index.php/s/YggdBLfdninEJX9"`
	TABMUNURL    string        `env:"TABMUN_URL" envDefault:"https://www.tesourotransparente.gov.br/ckan/dataset/abb968cb-3710-4f85-89cf-875c91b9c7f6/resource/eebb3bc6-9eea-4496-8bcf-304f33155282/download/TABMUN.CSV"`
	CountriesURL string        `env:"COUNTRIES_URL" envDefault:"https://balanca.economia.gov.br/balanca/bd/tabelas/PAIS.csv"`
	Dir          string        `env:"RFB_DIR" envDefault:".data/rfb"`
	Retries      int           `env:"RFB_RETRIES" envDefault:"8"`
	StallTimeout time.Duration `env:"RFB_STALL_TIMEOUT" envDefault:"1m"`
}

// Validate checks the values; errors name the variable.
func (c Config) Validate() error {
	var errs []error
	for _, u := range []struct{ name, value string }{
		{"RFB_SHARE_URL", c.ShareURL}, {"TABMUN_URL", c.TABMUNURL}, {"COUNTRIES_URL", c.CountriesURL},
	} {
		if err := checkHTTPURL(u.value); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.name, err))
		}
	}
	if c.ShareURL != "" {
		if _, err := ParseShare(c.ShareURL); err != nil {
			errs = append(errs, fmt.Errorf("RFB_SHARE_URL: %w", err))
		}
	}
	if c.Dir == "" {
		errs = append(errs, errors.New("RFB_DIR: empty (default .data/rfb)"))
	}
	if c.Retries < 0 {
		errs = append(errs, fmt.Errorf("RFB_RETRIES: %d is negative", c.Retries))
	}
	if c.StallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("RFB_STALL_TIMEOUT: %s is not positive (say 1m)", c.StallTimeout))
	}
	return errors.Join(errs...)
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", Redact(s), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", Redact(s))
	}
	return nil
}

// Redact hides a password in a URL's user information, for messages.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return userInfo.ReplaceAllString(s, "//")
	}
	if u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// userInfo is the user:password@ part of a URL that does not parse.
var userInfo = regexp.MustCompile(`//[^/@]*@`)
