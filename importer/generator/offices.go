package generator

import (
	"io"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
)

var commercialCNAEs, publicCNAEs, associationCNAEs []string

func init() {
	for _, c := range cnaes {
		switch c.code[:2] {
		case "84":
			publicCNAEs = append(publicCNAEs, c.code)
		case "94":
			associationCNAEs = append(associationCNAEs, c.code)
		}
		if c.code[:2] != "84" && c.code[:2] != "94" && c.code != "8888888" && c.code != "8112500" {
			commercialCNAEs = append(commercialCNAEs, c.code)
		}
	}
}

func (g *gen) writeEstabelecimentos(w io.Writer, lo, hi int) (int, error) {
	var rc rec
	n := 0
	for i := lo; i < hi; i++ {
		p := g.plan(i)
		k, err := g.offices(&rc, &p, -1, w)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, rc.flush(w, true)
}

// offices writes every office of the company; office keep (if >= 0) is also
// recorded field by field in rc.rows.
func (g *gen) offices(rc *rec, p *plan, keep int, w io.Writer) (int, error) {
	r := g.rng(sOffice, p.i)
	var b [64]byte
	for k := 0; k < p.offices; k++ {
		rc.keep = k == keep
		base := order(p, k, append(b[:0], p.root...))
		c := cnpj.Build(p.root, string(base[8:12]))
		rc.f(p.root)
		rc.fb(base[8:12])
		rc.f(string(c[12:]))
		if k == 0 {
			rc.f("1")
		} else {
			rc.f("2")
		}
		// nome fantasia
		switch {
		case p.kind == kIndividual && r.per(3500):
			rc.f(r.pick(fantasias) + " " + firstWord(p.owner))
		case p.kind != kIndividual && r.per(4500):
			rc.f(r.pick(fantasias) + " " + r.pick(brands))
		default:
			rc.f("")
		}
		// situação, its date and motivo
		founded := p.founded
		if k > 0 {
			founded = r.between(p.founded, g.dumpDays)
		}
		status, motivo := "02", "00"
		x := r.n(100)
		switch {
		case p.headOrder == "0002" && k == 1:
			status, motivo = "08", "28"
		case x < 55:
		case x < 88:
			status, motivo = "08", r.pick([]string{"01", "01", "01", "01", "01", "01", "54", "02", "03", "04", "21", "80"})
		case x < 97:
			status, motivo = "04", r.pick([]string{"63", "63", "63", "66", "71", "14", "15", "73"})
		case x < 99:
			status, motivo = "03", r.pick([]string{"18", "14", "13"})
		default:
			status, motivo = "01", r.pick([]string{"16", "09"})
		}
		if status != "02" && r.per(100) {
			motivo = unknownMotivo
		}
		rc.f(status)
		switch {
		case r.per(30):
			rc.f(nullDate(r))
		case status == "02" && r.per(7000):
			rc.fb(appendDate(b[:0], founded))
		default:
			rc.fb(appendDate(b[:0], r.between(founded, g.dumpDays)))
		}
		rc.f(motivo)
		// abroad?
		abroad := (k == 0 && p.i == anchorAbroad) || r.per(30)
		mun := brMunicipios[p.mun]
		if k > 0 && r.per(5000) {
			mun = brMunicipios[pickMunicipio(r)]
		}
		munCode := mun.rfb
		if !abroad && r.per(5) {
			munCode = unknownMunicipio
		}
		if abroad {
			rc.f(r.pick(citiesAbroad))
			if r.per(1000) {
				rc.f(r.pick(unknownPaises))
			} else {
				rc.f(r.pick(foreignPaises))
			}
		} else {
			rc.f("")
			if r.per(100) {
				rc.f("105")
			} else {
				rc.f("")
			}
		}
		// início de atividade
		if r.per(10) {
			rc.f(nullDate(r))
		} else {
			rc.fb(appendDate(b[:0], founded))
		}
		// CNAEs
		var list []string
		switch p.kind {
		case kPublic:
			list = publicCNAEs
		case kAssociation:
			list = associationCNAEs
		case kCondo:
			list = []string{"8112500"}
		default:
			list = commercialCNAEs
		}
		switch {
		case r.per(20):
			rc.f("8888888")
		case r.per(10):
			rc.f(r.pick(unknownCNAEs))
		default:
			rc.f(r.pick(list))
		}
		if r.per(5000) {
			rc.f("")
		} else {
			s := b[:0]
			for j, m := 0, 1+r.n(5); j < m; j++ {
				if j > 0 {
					s = append(s, ',')
				}
				if r.per(20) {
					s = append(s, r.pick(unknownCNAEs)...)
				} else {
					s = append(s, r.pick(commercialCNAEs)...)
				}
			}
			rc.fb(s)
		}
		// address
		rc.f(r.pick(streetTypes))
		rc.f(r.pick(streets))
		switch {
		case r.per(500):
			rc.f("S/N")
		case r.per(200):
			rc.f("SN")
		default:
			rc.fb(itoaPad(b[:0], r.between(1, 9999), 1))
		}
		if r.per(4000) {
			rc.f(r.pick(complements))
		} else {
			rc.f("")
		}
		rc.f(r.pick(districts))
		if abroad {
			rc.f("")
			rc.f("EX")
			rc.f(exteriorMunicipio)
		} else {
			cr := cepRange[mun.uf]
			cep := itoaPad(b[:0], r.between(cr[0], cr[1]), 5)
			cep = itoaPad(cep, r.n(1000), 3)
			if cep[0] == '0' && r.per(1000) {
				cep = cep[1:] // lost its leading zero, as some real rows did
			}
			rc.fb(cep)
			rc.f(mun.uf)
			rc.f(munCode)
		}
		// phones: DDD 1, phone 1, DDD 2, phone 2, DDD fax, fax
		area := ddd[mun.uf]
		for j, prob := range [3]int{8500, 2000, 500} {
			switch {
			case abroad || !r.per(prob):
				rc.f("")
				rc.f("")
			case j == 0 && r.per(100):
				rc.f("")
				rc.f([]string{"0", "0000"}[r.n(2)])
			case r.per(4000):
				rc.f(area)
				rc.fb(r.digits(append(b[:0], '9'), 8))
			default:
				rc.f(area)
				rc.fb(r.digits(append(b[:0], byte('2'+r.n(4))), 7))
			}
		}
		// e-mail, lowercase
		if r.per(5500) {
			e := b[:0]
			if p.kind == kIndividual || r.per(3000) {
				e = appendFolded(e, firstWord(p.owner))
				e = append(e, '.')
				e = appendFolded(e, lastWord(p.owner))
				e = itoaPad(e, r.n(1000), 1)
				e = append(e, '@')
				e = append(e, emailDomains[r.n(len(emailDomains))]...)
			} else {
				e = append(e, []string{"contato", "financeiro", "adm", "fiscal"}[r.n(4)]...)
				e = append(e, '@')
				e = appendFolded(e, firstWord(p.name))
				e = itoaPad(e, p.i%1000, 1)
				e = append(e, ".com.br"...)
			}
			rc.fb(e)
		} else {
			rc.f("")
		}
		// situação especial
		if r.per(30) {
			rc.f(r.pick(specials))
			rc.fb(appendDate(b[:0], r.between(founded, g.dumpDays)))
		} else {
			rc.f("")
			rc.f("")
		}
		rc.end()
		if err := rc.flush(w, false); err != nil {
			return k, err
		}
	}
	rc.keep = false
	return p.offices, nil
}

func firstWord(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i]
		}
	}
	return s
}

func lastWord(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return s[i+1:]
		}
	}
	return s
}
