package cnpj

import (
	"errors"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, s := range []string{
		"33683111000280", // SERPRO branch
		"33683111000107", // SERPRO head office
		"19131243000197", // Open Knowledge Brasil
		"12ABC34501DE35", // the alphanumeric example of the contract
		"00000000000191", // Banco do Brasil
	} {
		c, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q) = %v", s, err)
			continue
		}
		if c.String() != s {
			t.Errorf("Parse(%q) = %q", s, c)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	cases := map[string]error{
		"":                   ErrLength,
		"3368311100028":      ErrLength,
		"336831110002800":    ErrLength,
		"33.683.111/0002-80": ErrLength,
		"33683111000281":     ErrCheckDigit,
		"33683111000290":     ErrCheckDigit,
		"12abc34501de35":     ErrCharacter,
		"12ABC34501DE3A":     ErrCharacter,
		"12ABC34501DE36":     ErrCheckDigit,
		"3368311100028 ":     ErrCharacter,
		"33683111-00280":     ErrCharacter,
		"３３683111000280":     ErrLength,
	}
	for s, want := range cases {
		if _, err := Parse(s); !errors.Is(err, want) {
			t.Errorf("Parse(%q) = %v, want %v", s, err, want)
		}
	}
}

func TestBuild(t *testing.T) {
	if got := Build("33683111", "0002"); got != "33683111000280" {
		t.Errorf("Build = %s", got)
	}
	if got := Build("12ABC345", "01DE"); got != "12ABC34501DE35" {
		t.Errorf("Build = %s", got)
	}
	c := Build("33683111", "0002")
	if c.Root() != "33683111" || c.Order() != "0002" {
		t.Errorf("Root/Order = %s/%s", c.Root(), c.Order())
	}
}

func TestParseRoot(t *testing.T) {
	for in, want := range map[string]Root{
		"33683111": "33683111",
		"360305":   "00360305",
		"0":        "00000000",
		"12ABC345": "12ABC345",
	} {
		got, err := ParseRoot(in)
		if err != nil || got != want {
			t.Errorf("ParseRoot(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "123456789", "12abc345", "12AB", "-1", "1 2", "1.0"} {
		if r, err := ParseRoot(in); err == nil {
			t.Errorf("ParseRoot(%q) = %q, want an error", in, r)
		}
	}
	if n, ok := Root("00360305").Int(); !ok || n != 360305 {
		t.Errorf("Int = %d, %v", n, ok)
	}
	if _, ok := Root("12ABC345").Int(); ok {
		t.Error("an alphanumeric root has no integer value")
	}
}

func TestPersonID(t *testing.T) {
	a := PersonID(Natural, "***220050**", "ANDRE DE CESERO")
	if len(a) != 36 {
		t.Fatalf("len = %d", len(a))
	}
	if a != PersonID(Natural, "***220050**", "ANDRE DE CESERO") {
		t.Error("person ids must be deterministic")
	}
	if a == PersonID(Legal, "***220050**", "ANDRE DE CESERO") {
		t.Error("the type is part of the id")
	}
	if a == PersonID(Natural, "***220050**", "ANDRE DE CESER") {
		t.Error("the name is part of the id")
	}
	// Fields are separated so that moving a character between them changes the id.
	if PersonID(Natural, "ab", "c") == PersonID(Natural, "a", "bc") {
		t.Error("fields must be delimited")
	}
}

func TestMaskedCPF(t *testing.T) {
	for s, want := range map[string]bool{
		"***220050**": true, NoCPF: true, "***22005***": false, "12322005011": false, "***22a050**": false, "": false,
	} {
		if MaskedCPF(s) != want {
			t.Errorf("MaskedCPF(%q) != %v", s, want)
		}
	}
}

func TestDigits(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "0123456789": true, "": false, "12a": false, " 1": false, "１": false} {
		if Digits(s) != want {
			t.Errorf("Digits(%q) != %v", s, want)
		}
	}
}
