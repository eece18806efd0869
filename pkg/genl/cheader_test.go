package genl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// A tiny reader of C UAPI headers: the integer #defines, the string
// #defines and every enum, with implicit increments and "= expr" values.
// Expressions are integers (with U/L suffixes), names defined before,
// parentheses, + - << >> |.

type cHeader struct {
	ints    map[string]int64  // #define NAME expr, and enum members
	strs    map[string]string // #define NAME "text"
	enums   map[string][]string
	nenums  int // "enum" keywords seen: each must be parsed
	defines []string
}

var (
	cComment = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	cDefine  = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[ \t]+(.*?))?[ \t]*$`)
	cEnum    = regexp.MustCompile(`\benum\s+(\w+)\s*\{([^}]*)\}\s*;`)
	cEnumKw  = regexp.MustCompile(`\benum\b`)
	cString  = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)"$`)
)

func parseCHeader(text string) (*cHeader, error) {
	text = cComment.ReplaceAllString(text, " ")
	h := &cHeader{ints: map[string]int64{}, strs: map[string]string{}, enums: map[string][]string{}}
	for _, m := range cDefine.FindAllStringSubmatch(text, -1) {
		name, val := m[1], m[2]
		h.defines = append(h.defines, name)
		switch {
		case val == "": // include guard
		case cString.MatchString(val):
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("#define %s: %v", name, err)
			}
			h.strs[name] = s
		default:
			v, err := h.eval(val)
			if err != nil {
				return nil, fmt.Errorf("#define %s: %v", name, err)
			}
			h.ints[name] = v
		}
	}
	h.nenums = len(cEnumKw.FindAllString(text, -1))
	for _, m := range cEnum.FindAllStringSubmatch(text, -1) {
		if err := h.parseEnum(m[1], m[2]); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *cHeader) parseEnum(name, body string) error {
	next := int64(0)
	for _, item := range strings.Split(body, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		member, expr, explicit := strings.Cut(item, "=")
		member = strings.TrimSpace(member)
		if !isCIdent(member) {
			return fmt.Errorf("enum %s: bad member %q", name, item)
		}
		if _, dup := h.ints[member]; dup {
			return fmt.Errorf("enum %s: %s defined twice", name, member)
		}
		if explicit {
			v, err := h.eval(expr)
			if err != nil {
				return fmt.Errorf("enum %s: %s: %v", name, member, err)
			}
			next = v
		}
		h.ints[member] = next
		h.enums[name] = append(h.enums[name], member)
		next++
	}
	return nil
}

func isCIdent(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// eval evaluates a constant expression by precedence climbing.
func (h *cHeader) eval(expr string) (int64, error) {
	toks := regexp.MustCompile(`\s*(<<|>>|[-+|()]|\w+)`).FindAllStringSubmatch(expr, -1)
	var ts []string
	n := 0
	for _, t := range toks {
		ts = append(ts, t[1])
		n += len(t[0])
	}
	if strings.TrimSpace(expr[n:]) != "" {
		return 0, fmt.Errorf("cannot parse %q", expr)
	}
	p := &cExpr{h: h, toks: ts}
	v, err := p.binary(0)
	if err == nil && p.pos != len(ts) {
		err = fmt.Errorf("trailing %q in %q", ts[p.pos], expr)
	}
	return v, err
}

type cExpr struct {
	h    *cHeader
	toks []string
	pos  int
}

var cPrec = map[string]int{"|": 1, "<<": 2, ">>": 2, "+": 3, "-": 3}

func (p *cExpr) binary(min int) (int64, error) {
	l, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.pos < len(p.toks) {
		op := p.toks[p.pos]
		prec, ok := cPrec[op]
		if !ok || prec <= min {
			break
		}
		p.pos++
		r, err := p.binary(prec)
		if err != nil {
			return 0, err
		}
		switch op {
		case "|":
			l |= r
		case "<<":
			l <<= r
		case ">>":
			l >>= r
		case "+":
			l += r
		case "-":
			l -= r
		}
	}
	return l, nil
}

func (p *cExpr) unary() (int64, error) {
	if p.pos >= len(p.toks) {
		return 0, fmt.Errorf("unexpected end")
	}
	t := p.toks[p.pos]
	p.pos++
	switch {
	case t == "-":
		v, err := p.unary()
		return -v, err
	case t == "(":
		v, err := p.binary(0)
		if err != nil {
			return 0, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos] != ")" {
			return 0, fmt.Errorf("missing )")
		}
		p.pos++
		return v, nil
	case t[0] >= '0' && t[0] <= '9':
		return strconv.ParseInt(strings.TrimRight(t, "uUlL"), 0, 64)
	}
	v, ok := p.h.ints[t]
	if !ok {
		return 0, fmt.Errorf("unknown name %q", t)
	}
	return v, nil
}

// TestCHeaderParser checks the reader itself on the constructs the UAPI
// header uses.
func TestCHeaderParser(t *testing.T) {
	h, err := parseCHeader(`
#ifndef _GUARD_H
#define _GUARD_H
#define NAME		"fam"	/* a comment */
#define VERSION 2 // another
#define BIT(n) unused
#define F_A	(1U << 0)
#define F_B	(1U << 3)
enum e1 {
	E1_A,			/* 0 */
	E1_B,
	E1_C = 10,
	E1_D,
	__E1_MAX,
	E1_MAX = __E1_MAX - 1
};
enum e2 { E2_X = 0x10, E2_Y = F_B | 1, E2_Z = (2 + 3) << 1, };
#endif
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"VERSION": 2, "F_A": 1, "F_B": 8, "E1_A": 0, "E1_B": 1, "E1_C": 10, "E1_D": 11,
		"__E1_MAX": 12, "E1_MAX": 11, "E2_X": 16, "E2_Y": 9, "E2_Z": 10,
	}
	for k, v := range want {
		if got, ok := h.ints[k]; !ok || got != v {
			t.Errorf("%s = %d (defined %v), want %d", k, got, ok, v)
		}
	}
	if h.strs["NAME"] != "fam" || len(h.enums) != 2 || h.nenums != 2 {
		t.Errorf("strs %v, %d enums of %d", h.strs, len(h.enums), h.nenums)
	}
}
