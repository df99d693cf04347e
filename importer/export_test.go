package importer

// Country is a row of the country table as the import keeps it.
type Country struct {
	Name string
	M49  int
}

// ReadCountries reads a country table as the import does, keyed by the RFB
// code without leading zeros.
func ReadCountries(path string) (map[string]Country, error) {
	m, err := readCountries(path)
	out := make(map[string]Country, len(m))
	for k, c := range m {
		out[k] = Country{Name: c.name, M49: c.m49}
	}
	return out, err
}
