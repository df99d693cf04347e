package generator

import "unicode/utf8"

// Word lists are written in UTF-8 here and converted once to ISO-8859-1, the
// dump's encoding, so rows are assembled from ready Latin-1 bytes.

// latin1 converts a UTF-8 string whose runes are all below U+0100 to ISO-8859-1.
func latin1(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r >= 0x100 {
			panic("generator: rune outside Latin-1 in " + s)
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// fromLatin1 decodes ISO-8859-1 bytes to UTF-8 (for Summary samples).
func fromLatin1(s string) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		b = utf8.AppendRune(b, rune(s[i]))
	}
	return string(b)
}

func latin1All(in ...string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = latin1(s)
	}
	return out
}

// fold maps a Latin-1 letter to lowercase ASCII (accents dropped) for e-mail
// addresses; other bytes but digits become 0, meaning "skip".
var fold = func() (t [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = byte(c)
		t[c-32] = byte(c)
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for from, to := range map[string]byte{"ÀÁÂÃÄàáâãä": 'a', "ÇÇç": 'c', "ÈÉÊËèéêë": 'e', "ÌÍÎÏìíîï": 'i', "ÒÓÔÕÖòóôõö": 'o', "ÙÚÛÜùúûü": 'u', "Ññ": 'n'} {
		for _, r := range from {
			t[r] = to
		}
	}
	return t
}()

func appendFolded(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := fold[s[i]]; c != 0 {
			b = append(b, c)
		}
	}
	return b
}

var firstNames = latin1All("JOSÉ", "MARIA", "JOÃO", "ANTÔNIO", "FRANCISCO", "ANA", "LUIZ", "PAULO", "CARLOS", "MANOEL",
	"PEDRO", "FRANCISCA", "MARCOS", "RAIMUNDO", "SEBASTIÃO", "ANTÔNIA", "MARCELO", "JORGE", "MÁRCIA", "GERALDO",
	"ADRIANA", "SANDRA", "LUIS", "FERNANDO", "FÁBIO", "ROBERTO", "MÁRCIO", "EDSON", "ANDRÉ", "SÉRGIO",
	"JOSEFA", "PATRÍCIA", "DANIEL", "RODRIGO", "RAFAEL", "JOAQUIM", "VERA", "RICARDO", "EDUARDO", "TEREZINHA",
	"SÔNIA", "ALEXANDRE", "RITA", "LUCIANA", "CLÁUDIO", "ROSÂNGELA", "GABRIEL", "LUCAS", "JÚLIA", "BEATRIZ",
	"HELENA", "GUILHERME", "INÊS", "CAUÃ", "LETÍCIA", "VINÍCIUS", "CÉLIA", "OTÁVIO", "HÉLIO", "ÂNGELA")

var surnames = latin1All("DA SILVA", "DOS SANTOS", "OLIVEIRA", "SOUZA", "RODRIGUES", "FERREIRA", "ALVES", "PEREIRA",
	"LIMA", "GOMES", "COSTA", "RIBEIRO", "MARTINS", "CARVALHO", "ALMEIDA", "LOPES", "SOARES", "FERNANDES",
	"VIEIRA", "BARBOSA", "ROCHA", "DIAS", "NASCIMENTO", "ANDRADE", "MOREIRA", "NUNES", "MARQUES", "MACHADO",
	"MENDES", "FREITAS", "CARDOSO", "RAMOS", "GONÇALVES", "SANTANA", "TEIXEIRA", "ARAÚJO", "DA CONCEIÇÃO",
	"MÜLLER", "BRANDÃO", "GALVÃO", "ASSUNÇÃO", "DE JESUS", "PIRES", "CAVALCANTI", "SCHMIDT", "ROMÃO", "LEÃO",
	"SIMÕES", "GUIMARÃES", "FALCÃO", "MAGALHÃES", "D'ÁVILA", "BRÜGGER", "ESPÍNDOLA")

var foreignNames = latin1All("JOHN SMITH", "MARY JOHNSON", "HANS MÜLLER", "JEAN-PIERRE DUBOIS", "GIUSEPPE ROSSI",
	"HIROSHI TANAKA", "WEI ZHANG", "CARLOS GARCÍA LÓPEZ", "MANUEL PEREIRA DA COSTA", "SOPHIE MARTIN",
	"JAMES O'CONNOR", "LUCÍA FERNÁNDEZ", "FRANÇOIS LEFÈVRE", "KIM MIN-JUN", "ANNA KOWALSKA")

var foreignCompanies = latin1All("GLOBAL HOLDINGS LLC", "ATLANTIC INVESTMENTS INC.", "IBÉRICA PARTICIPACIONES S.L.",
	"NORDIC CAPITAL AB", "SHANGHAI TRADING CO., LTD.", "ALPEN BETEILIGUNGS GMBH", "LUSITÂNIA SGPS, S.A.",
	"ANDES INVERSIONES SPA", "RIVER PLATE CORP.", "NIPPON SHOJI K.K.", "MAPLE LEAF VENTURES LTD", "SOCIÉTÉ GÉNÉRALE DE PARTICIPATIONS")

var brands = latin1All("SÃO JORGE", "BOA VISTA", "PRIMAVERA", "AURORA", "HORIZONTE", "PIONEIRA", "ESTRELA", "NOVA ERA",
	"UNIÃO", "ALIANÇA", "CENTRAL", "AMAZÔNIA", "IPÊ", "ATLÂNTICO", "CRISTAL", "PANTANAL", "GAÚCHA", "MINEIRA",
	"PAULISTA", "NORDESTE", "SOL NASCENTE", "BOM PASTOR", "PARAÍSO", "VITÓRIA", "JACARANDÁ", "ITAÚNA", "CORAÇÃO DE JESUS",
	"TRÊS IRMÃOS", "BELA VISTA", "SANTA LUZIA", "PORTAL", "IGUAÇU", "ARAGUAIA", "TAMOIOS", "SERTÃO")

var themes = latin1All("COMÉRCIO DE ALIMENTOS", "TRANSPORTES", "CONSTRUÇÕES E INCORPORAÇÕES", "SERVIÇOS MÉDICOS",
	"TECNOLOGIA DA INFORMAÇÃO", "DISTRIBUIDORA DE BEBIDAS", "AUTO PEÇAS", "CONFECÇÕES", "PADARIA E CONFEITARIA",
	"ENGENHARIA", "CONSULTORIA EMPRESARIAL", "MATERIAIS DE CONSTRUÇÃO", "FARMÁCIA", "ASSESSORIA CONTÁBIL",
	"INDÚSTRIA E COMÉRCIO DE MÓVEIS", "AGROPECUÁRIA", "EDUCAÇÃO INFANTIL", "LOGÍSTICA", "ACADEMIA DE GINÁSTICA",
	"SALÃO DE BELEZA", "MERCADINHO", "EMPREENDIMENTOS IMOBILIÁRIOS", "SEGURANÇA PATRIMONIAL", "CLÍNICA ODONTOLÓGICA")

var fantasias = latin1All("MERCADO", "PADARIA", "AUTO CENTER", "BAZAR", "RESTAURANTE", "LANCHONETE", "DROGARIA",
	"ÓTICA", "PAPELARIA", "ELETRÔNICOS", "MODAS", "PET SHOP", "AÇOUGUE", "SORVETERIA", "CHURRASCARIA")

var streetTypes = latin1All("RUA", "RUA", "RUA", "RUA", "RUA", "RUA", "AVENIDA", "AVENIDA", "AVENIDA", "TRAVESSA",
	"ALAMEDA", "ESTRADA", "RODOVIA", "PRACA", "QUADRA")

var streets = latin1All("DAS FLORES", "SÃO JOÃO", "GETÚLIO VARGAS", "TIRADENTES", "DOM PEDRO II", "JOSÉ BONIFÁCIO",
	"BARÃO DO RIO BRANCO", "SETE DE SETEMBRO", "XV DE NOVEMBRO", "PRINCESA ISABEL", "MARECHAL DEODORO",
	"DUQUE DE CAXIAS", "SANTOS DUMONT", "CASTRO ALVES", "RUI BARBOSA", "DAS PALMEIRAS", "DOS IPÊS",
	"PROFESSOR JOÃO CÂNDIDO", "CORONEL ANTÔNIO JOSÉ", "DOUTOR OSVALDO CRUZ", "BR 116 KM 12", "L2 SGAN",
	"DA CONCEIÇÃO", "ALMIRANTE BARROSO", "FREI CANECA", "PAULISTA")

var districts = latin1All("CENTRO", "CENTRO", "CENTRO", "JARDIM AMÉRICA", "VILA MARIANA", "CONCEIÇÃO", "SÃO CRISTÓVÃO",
	"BOA VIAGEM", "SANTA CECÍLIA", "JARDIM PAULISTA", "ASA NORTE", "ASA SUL", "ZONA RURAL", "CIDADE NOVA",
	"PARQUE INDUSTRIAL; SETOR 2", "VILA SÃO JOSÉ", "JARDIM DAS ACÁCIAS", "BAIRRO DOS ESTADOS", "PIRATININGA")

var complements = latin1All("SALA 101", "APTO 12; BLOCO B", "LOJA 2", "GALPÃO 3", "ANDAR 5 CONJ 51", "FUNDOS",
	"TÉRREO", "BOX 14", "QUADRA 4 LOTE 7", "KM 12; LADO ÍMPAR", "EDIF. CENTRO EMPRESARIAL", "CASA 2")

var specials = latin1All("RECUPERACAO JUDICIAL", "FALENCIA", "EM LIQUIDACAO EXTRAJUDICIAL", "INTERVENCAO",
	"LIQUIDACAO JUDICIAL")

var emailDomains = []string{"gmail.com", "hotmail.com", "yahoo.com.br", "outlook.com", "uol.com.br", "bol.com.br", "terra.com.br"}

// ddd is the main area code per UF, for phone numbers.
var ddd = map[string]string{
	"RO": "69", "AC": "68", "AM": "92", "RR": "95", "PA": "91", "AP": "96", "TO": "63",
	"MA": "98", "PI": "86", "CE": "85", "RN": "84", "PB": "83", "PE": "81", "AL": "82", "SE": "79", "BA": "71",
	"MG": "31", "ES": "27", "RJ": "21", "SP": "11", "PR": "41", "SC": "48", "RS": "51",
	"MS": "67", "MT": "65", "GO": "62", "DF": "61",
}

// cepRange is the range of the first five CEP digits per UF.
var cepRange = map[string][2]int{
	"SP": {1000, 19999}, "RJ": {20000, 28999}, "ES": {29000, 29999}, "MG": {30000, 39999}, "BA": {40000, 48999},
	"SE": {49000, 49999}, "PE": {50000, 56999}, "AL": {57000, 57999}, "PB": {58000, 58999}, "RN": {59000, 59999},
	"CE": {60000, 63999}, "PI": {64000, 64999}, "MA": {65000, 65999}, "PA": {66000, 68899}, "AP": {68900, 68999},
	"AM": {69000, 69299}, "RR": {69300, 69399}, "AC": {69900, 69999}, "DF": {70000, 72799}, "GO": {72800, 76799},
	"RO": {76800, 76999}, "TO": {77000, 77999}, "MT": {78000, 78899}, "MS": {79000, 79999}, "PR": {80000, 87999},
	"SC": {88000, 89999}, "RS": {90000, 99999},
}
