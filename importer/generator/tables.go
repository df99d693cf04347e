package generator

import (
	"fmt"
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
)

// The code tables below are a synthetic, plausible subset of the real ones:
// real codes with Portuguese descriptions where the importer must show them,
// and deliberately missing codes (unknown* below) that the data still uses,
// as the real dump does.

type code struct{ code, desc string }

var cnaes = []code{
	{"0111301", "Cultivo de arroz"},
	{"0151201", "Criação de bovinos para corte"},
	{"0161003", "Serviço de preparação de terreno, cultivo e colheita"},
	{"1033302", "Fabricação de sucos de frutas; hortaliças e legumes; exceto concentrados"},
	{"1091102", "Fabricação de produtos de padaria e confeitaria com predominância de produção própria"},
	{"1412601", "Confecção de peças do vestuário, exceto roupas íntimas e as confeccionadas sob medida"},
	{"2599399", "Fabricação de outros produtos de metal não especificados anteriormente"},
	{"3511501", "Geração de energia elétrica"},
	{"3600601", "Captação, tratamento e distribuição de água"},
	{"4120400", "Construção de edifícios"},
	{"4321500", "Instalação e manutenção elétrica"},
	{"4330404", "Serviços de pintura de edifícios em geral"},
	{"4399103", "Obras de alvenaria"},
	{"4520001", "Serviços de manutenção e reparação mecânica de veículos automotores"},
	{"4530703", "Comércio a varejo de peças e acessórios novos para veículos automotores"},
	{"4661300", "Comércio atacadista de máquinas; aparelhos e equipamentos para uso agropecuário; partes e peças"},
	{"4711301", "Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - hipermercados"},
	{"4711302", "Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - supermercados"},
	{"4712100", "Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - minimercados, mercearias e armazéns"},
	{"4721102", "Padaria e confeitaria com predominância de revenda"},
	{"4744099", "Comércio varejista de materiais de construção em geral"},
	{"4751201", "Comércio varejista especializado de equipamentos e suprimentos de informática"},
	{"4771701", "Comércio varejista de produtos farmacêuticos, sem manipulação de fórmulas"},
	{"4781400", "Comércio varejista de artigos do vestuário e acessórios"},
	{"4789099", "Comércio varejista de outros produtos não especificados anteriormente"},
	{"4930201", "Transporte rodoviário de carga, exceto produtos perigosos e mudanças, municipal"},
	{"4930202", "Transporte rodoviário de carga, exceto produtos perigosos e mudanças, intermunicipal, interestadual e internacional"},
	{"5229099", "Outras atividades auxiliares dos transportes terrestres não especificadas anteriormente"},
	{"5320202", "Serviços de entrega rápida"},
	{"5510801", "Hotéis"},
	{"5611201", "Restaurantes e similares"},
	{"5611203", "Lanchonetes, casas de chá, de sucos e similares"},
	{"6201501", "Desenvolvimento de programas de computador sob encomenda"},
	{"6202300", "Desenvolvimento e licenciamento de programas de computador customizáveis"},
	{"6203100", "Desenvolvimento e licenciamento de programas de computador não-customizáveis"},
	{"6204000", "Consultoria em tecnologia da informação"},
	{"6209100", "Suporte técnico, manutenção e outros serviços em tecnologia da informação"},
	{"6311900", "Tratamento de dados, provedores de serviços de aplicação e serviços de hospedagem na internet"},
	{"6422100", "Bancos múltiplos, com carteira comercial"},
	{"6462000", "Holdings de instituições não-financeiras"},
	{"6463800", "Outras sociedades de participação, exceto holdings"},
	{"6810202", "Aluguel de imóveis próprios"},
	{"6821801", "Corretagem na compra e venda e avaliação de imóveis"},
	{"6911701", "Serviços advocatícios"},
	{"6920601", "Atividades de contabilidade"},
	{"7020400", "Atividades de consultoria em gestão empresarial, exceto consultoria técnica específica"},
	{"7112000", "Serviços de engenharia"},
	{"7319002", "Promoção de vendas"},
	{"7490104", "Atividades de intermediação e agenciamento de serviços e negócios em geral, exceto imobiliários"},
	{"8112500", "Condomínios prediais"},
	{"8219999", "Preparação de documentos e serviços especializados de apoio administrativo não especificados anteriormente"},
	{"8411600", "Administração pública em geral"},
	{"8412400", "Regulação das atividades de saúde, educação, serviços culturais e outros serviços sociais"},
	{"8511200", "Educação infantil - creche"},
	{"8513900", "Ensino fundamental"},
	{"8599604", "Treinamento em desenvolvimento profissional e gerencial"},
	{"8630501", "Atividade médica ambulatorial com recursos para realização de procedimentos cirúrgicos"},
	{"8630503", "Atividade médica ambulatorial restrita a consultas"},
	{"8650004", "Atividades de fisioterapia"},
	{"9313100", "Atividades de condicionamento físico"},
	{"9430800", "Atividades de associações de defesa de direitos sociais"},
	{"9491000", "Atividades de organizações religiosas ou filosóficas"},
	{"9492800", "Atividades de organizações políticas"},
	{"9511800", "Reparação e manutenção de computadores e de equipamentos periféricos"},
	{"9602501", "Cabeleireiros, manicure e pedicure"},
	{"8888888", "Atividade Econômica não informada"},
}

// unknownCNAEs are used in data but absent from the Cnaes table.
var unknownCNAEs = []string{"4799901", "9609299"}

var motivos = []code{
	{"00", "SEM MOTIVO"},
	{"01", "EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA"},
	{"02", "INCORPORACAO"},
	{"03", "FUSAO"},
	{"04", "CISAO TOTAL"},
	{"09", "NAO INICIO DE ATIVIDADE"},
	{"13", "OMISSA CONTUMAZ"},
	{"14", "OMISSA NAO LOCALIZADA"},
	{"15", "INEXISTENCIA DE FATO"},
	{"16", "ANULACAO POR VICIOS"},
	{"18", "INTERRUPCAO TEMPORARIA DAS ATIVIDADES"},
	{"28", "TRANSFERENCIA FILIAL CONDICAO MATRIZ"},
	{"21", "PEDIDO DE BAIXA INDEFERIDA"},
	{"54", "EXTINCAO - TRATAMENTO DIFERENCIADO DADO AS ME E EPP (LEI COMPLEMENTAR NUMERO 123/2006)"},
	{"63", "OMISSAO DE DECLARACOES"},
	{"66", "INAPTIDAO"},
	{"71", "INAPTIDAO (LEI 11.941/2009 ART.54)"},
	{"73", "OMISSAO CONTUMAZ"},
	{"80", "BAIXA REGISTRADA NA JUNTA, INDEFERIDA NA RFB"},
}

// unknownMotivo appears in data but not in the Motivos table, as in the real dump.
const unknownMotivo = "32"

var naturezas = []code{
	{"1015", "Órgão Público do Poder Executivo Federal"},
	{"1031", "Órgão Público do Poder Executivo Municipal"},
	{"1104", "Autarquia Federal"},
	{"1244", "Município"},
	{"2011", "Empresa Pública"},
	{"2038", "Sociedade de Economia Mista"},
	{"2046", "Sociedade Anônima Aberta"},
	{"2054", "Sociedade Anônima Fechada"},
	{"2062", "Sociedade Empresária Limitada"},
	{"2135", "Empresário (Individual)"},
	{"2143", "Cooperativa"},
	{"2232", "Sociedade Simples Pura"},
	{"2240", "Sociedade Simples Limitada"},
	{"2305", "Empresa Individual de Responsabilidade Limitada (de Natureza Empresária)"},
	{"2321", "Sociedade Unipessoal de Advocacia"},
	{"3085", "Condomínio Edilício"},
	{"3220", "Organização Religiosa"},
	{"3999", "Associação Privada"},
	{"4120", "Produtor Rural (Pessoa Física)"},
	{"8885", "Natureza Jurídica não informada"},
}

var qualificacoes = []code{
	{"00", "Não informada"},
	{"05", "Administrador"},
	{"08", "Conselheiro de Administração"},
	{"10", "Diretor"},
	{"16", "Presidente"},
	{"14", "Mãe"},
	{"15", "Pai"},
	{"17", "Procurador"},
	{"19", "Síndico (Condomínio)"},
	{"22", "Sócio"},
	{"28", "Sócio-Gerente"},
	{"37", "Sócio Pessoa Jurídica Domiciliado no Exterior"},
	{"38", "Sócio Pessoa Física Residente no Exterior"},
	{"49", "Sócio-Administrador"},
	{"50", "Empresário"},
	{"54", "Fundador"},
	{"65", "Titular Pessoa Física Residente ou Domiciliado no Brasil"},
	{"78", "Titular Pessoa Jurídica Domiciliada no Brasil"},
}

// legacyQualificacao appears in data but not in the Qualificacoes table.
const legacyQualificacao = "36"

type pais struct {
	code, name string // name as the RFB table writes it
	m49        int
	iso3       string
}

var paises = []pais{
	{"023", "ALEMANHA", 276, "DEU"},
	{"063", "ARGENTINA", 32, "ARG"},
	{"097", "BOLIVIA", 68, "BOL"},
	{"105", "BRASIL", 76, "BRA"},
	{"149", "CANADA", 124, "CAN"},
	{"158", "CHILE", 152, "CHL"},
	{"160", "China, República Popular", 156, "CHN"},
	{"169", "COLOMBIA", 170, "COL"},
	{"190", "COREIA REPUBLICA DA", 410, "KOR"},
	{"245", "ESPANHA", 724, "ESP"},
	{"249", "ESTADOS UNIDOS", 840, "USA"},
	{"275", "FRANCA", 250, "FRA"},
	{"361", "INDIA", 356, "IND"},
	{"386", "ITALIA", 380, "ITA"},
	{"399", "JAPAO", 392, "JPN"},
	{"493", "MEXICO", 484, "MEX"},
	{"573", "Países Baixos (Holanda)", 528, "NLD"},
	{"586", "PARAGUAI", 600, "PRY"},
	{"607", "PORTUGAL", 620, "PRT"},
	{"628", "REINO UNIDO", 826, "GBR"},
	{"767", "SUICA", 756, "CHE"},
	{"845", "URUGUAI", 858, "URY"},
}

// foreignPaises are the countries used abroad (every table entry but Brasil).
var foreignPaises = func() []string {
	var out []string
	for _, p := range paises {
		if p.code != "105" {
			out = append(out, p.code)
		}
	}
	return out
}()

// unknownPaises are used in data but absent from the Paises table (like the
// codes the RFB started using in October 2025).
var unknownPaises = []string{"153", "851"}

// City names abroad, for offices in UF EX.
var citiesAbroad = []string{"NEW YORK", "MIAMI", "LISBOA", "PORTO", "BUENOS AIRES", "MONTEVIDEU", "ASSUNCAO", "TOQUIO", "XANGAI", "LONDRES", "PARIS", "MADRI", "ZURIQUE", "CIDADE DO MEXICO", "SANTIAGO", "BOGOTA", "TORONTO", "MUNIQUE", "MILAO", "AMSTERDA"}

type municipio struct {
	rfb, name, uf, ibge string
	tabmun              bool // present in TABMUN
}

// Real capitals with their real RFB and IBGE codes, so the familiar ones map right.
var capitals = []municipio{
	{"0003", "PORTO VELHO", "RO", "1100205", true},
	{"0139", "RIO BRANCO", "AC", "1200401", true},
	{"0255", "MANAUS", "AM", "1302603", true},
	{"0301", "BOA VISTA", "RR", "1400100", true},
	{"0427", "BELEM", "PA", "1501402", true},
	{"0605", "MACAPA", "AP", "1600303", true},
	{"9733", "PALMAS", "TO", "1721000", true},
	{"0921", "SAO LUIS", "MA", "2111300", true},
	{"1219", "TERESINA", "PI", "2211001", true},
	{"1389", "FORTALEZA", "CE", "2304400", true},
	{"1761", "NATAL", "RN", "2408102", true},
	{"2051", "JOAO PESSOA", "PB", "2507507", true},
	{"2531", "RECIFE", "PE", "2611606", true},
	{"2785", "MACEIO", "AL", "2704302", true},
	{"3105", "ARACAJU", "SE", "2800308", true},
	{"3849", "SALVADOR", "BA", "2927408", true},
	{"4123", "BELO HORIZONTE", "MG", "3106200", true},
	{"5705", "VITORIA", "ES", "3205309", true},
	{"6001", "RIO DE JANEIRO", "RJ", "3304557", true},
	{"7107", "SAO PAULO", "SP", "3550308", true},
	{"7535", "CURITIBA", "PR", "4106902", true},
	{"8105", "FLORIANOPOLIS", "SC", "4205407", true},
	{"8801", "PORTO ALEGRE", "RS", "4314902", true},
	{"9051", "CAMPO GRANDE", "MS", "5002704", true},
	{"9067", "CUIABA", "MT", "5103403", true},
	{"9373", "GOIANIA", "GO", "5208707", true},
	{"9701", "BRASILIA", "DF", "5300108", true},
}

var ufIBGE = map[string]int{
	"RO": 11, "AC": 12, "AM": 13, "RR": 14, "PA": 15, "AP": 16, "TO": 17,
	"MA": 21, "PI": 22, "CE": 23, "RN": 24, "PB": 25, "PE": 26, "AL": 27, "SE": 28, "BA": 29,
	"MG": 31, "ES": 32, "RJ": 33, "SP": 35, "PR": 41, "SC": 42, "RS": 43,
	"MS": 50, "MT": 51, "GO": 52, "DF": 53,
}

const (
	exteriorMunicipio = "9707" // in the Municipios table, never in TABMUN
	// newMunicipio is in the Municipios table but missing from TABMUN, like
	// 1182 (created 2025) in older TABMUN copies.
	newMunicipio = "1182"
	// unknownMunicipio is in neither table.
	unknownMunicipio = "9991"
)

var munPrefixes = []string{"SAO JOSE DO", "SANTA RITA DO", "NOVA", "PORTO", "BOM JESUS DO", "SANTO ANTONIO DO", "VILA", "CAMPOS DO", "LAGOA DO", "SERRA DO", "RIO", "MONTE ALEGRE DO"}
var munSuffixes = []string{"NORTE", "SUL", "ARAGUAIA", "PARAISO", "OESTE", "LESTE", "BURITI", "IPE", "CEDRO", "JATOBA", "PALMITAL"}

// municipios is the synthetic municipality table: the capitals plus 11
// invented towns per state (other than DF), 1182 without TABMUN row and 9707.
var municipios = buildMunicipios()

// brMunicipios are the municipalities offices in Brazil are placed in (all
// but 9707); capitals come first.
var brMunicipios []municipio

func buildMunicipios() []municipio {
	used := map[string]bool{exteriorMunicipio: true, newMunicipio: true, unknownMunicipio: true}
	usedIBGE := map[string]bool{}
	for _, c := range capitals {
		used[c.rfb] = true
		usedIBGE[c.ibge] = true
	}
	out := append([]municipio(nil), capitals...)
	next := 11
	k := 0
	for _, c := range capitals {
		if c.uf == "DF" {
			continue
		}
		for j := 0; j < 11; j++ {
			var rfb string
			for {
				rfb = fmt.Sprintf("%04d", next)
				next += 29
				if !used[rfb] {
					break
				}
			}
			used[rfb] = true
			name := munPrefixes[(k+j)%len(munPrefixes)] + " " + munSuffixes[(k*3+j)%len(munSuffixes)]
			if (k+j)%5 == 0 {
				name = munPrefixes[(k+j)%len(munPrefixes)] + " " + c.name
			}
			var ibge string
			for n := 0; ; n++ {
				ibge = strconv.Itoa(ufIBGE[c.uf]*100000 + 100 + (j*743+n*7)%99000)
				if !usedIBGE[ibge] {
					break
				}
			}
			usedIBGE[ibge] = true
			out = append(out, municipio{rfb, name, c.uf, ibge, true})
		}
		k++
	}
	out = append(out, municipio{newMunicipio, "BOA ESPERANCA DO NORTE", "MT", "5101837", false})
	brMunicipios = append([]municipio(nil), out...)
	out = append(out, municipio{exteriorMunicipio, "EXTERIOR", "EX", "", false})
	return out
}

// prefeituraCNPJ is the TABMUN "cnpj da prefeitura" column: a valid CNPJ
// derived from the municipality code.
func prefeituraCNPJ(rfb string) string {
	n, _ := strconv.Atoi(rfb)
	return string(cnpj.Build(fmt.Sprintf("%08d", 10000000+n*4871%89999999), "0001"))
}
