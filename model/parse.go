package model

import (
	"fmt"
	"strings"
)

// ParseRequirement reads one requirement in the kubectl-like syntax that Requirement.String writes:
//
//	key in (a,b)   In         key=v or key==v   In with one value
//	key notin (a)  NotIn      key!=v            NotIn with one value
//	key            Exists     !key              DoesNotExist
//	key>3          Gt         key<3             Lt
//
// Whitespace (ASCII) may surround every token. As in Kubernetes' selector parser, "key=" means the empty
// value and "()" is a list holding the empty value. The result is validated (Requirement.Validate), so a
// requirement that parses is always well formed.
func ParseRequirement(s string) (Requirement, error) {
	p := reqParser{toks: lexRequirement(s)}
	r, err := p.parse()
	if err != nil {
		return Requirement{}, fmt.Errorf("parse requirement %q: %w", s, err)
	}
	if err := r.Validate(); err != nil {
		return Requirement{}, fmt.Errorf("parse requirement %q: %w", s, err)
	}
	return r, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokNot    // !
	tokEq     // = or ==
	tokNotEq  // !=
	tokGt     // >
	tokLt     // <
	tokLParen // (
	tokRParen // )
	tokComma  // ,
)

type token struct {
	kind tokKind
	text string
}

// String names the token for error messages.
func (t token) String() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", t.text)
}

func isReqSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isReqSpecial(c byte) bool {
	return strings.IndexByte("!=<>(),", c) >= 0 || isReqSpace(c)
}

// lexRequirement splits s into tokens: words are maximal runs of bytes that are neither whitespace nor one
// of !=<>(),. Which words are valid keys or values is left to Validate.
func lexRequirement(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isReqSpace(c):
			i++
		case c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, token{tokNotEq, "!="})
				i += 2
			} else {
				toks = append(toks, token{tokNot, "!"})
				i++
			}
		case c == '=':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, token{tokEq, "=="})
				i += 2
			} else {
				toks = append(toks, token{tokEq, "="})
				i++
			}
		case c == '>':
			toks = append(toks, token{tokGt, ">"})
			i++
		case c == '<':
			toks = append(toks, token{tokLt, "<"})
			i++
		case c == '(':
			toks = append(toks, token{tokLParen, "("})
			i++
		case c == ')':
			toks = append(toks, token{tokRParen, ")"})
			i++
		case c == ',':
			toks = append(toks, token{tokComma, ","})
			i++
		default:
			j := i
			for j < len(s) && !isReqSpecial(s[j]) {
				j++
			}
			toks = append(toks, token{tokWord, s[i:j]})
			i = j
		}
	}
	return append(toks, token{kind: tokEOF})
}

type reqParser struct {
	toks []token
	pos  int
}

func (p *reqParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *reqParser) peek() token { return p.toks[p.pos] }

func (p *reqParser) expectEOF() error {
	if t := p.next(); t.kind != tokEOF {
		return fmt.Errorf("unexpected %s after the requirement", t)
	}
	return nil
}

func (p *reqParser) parse() (Requirement, error) {
	t := p.next()
	if t.kind == tokNot {
		key := p.next()
		if key.kind != tokWord {
			return Requirement{}, fmt.Errorf("expected a key after \"!\", got %s", key)
		}
		return Requirement{Key: key.text, Operator: OpDoesNotExist}, p.expectEOF()
	}
	if t.kind != tokWord {
		return Requirement{}, fmt.Errorf("expected a key or \"!\", got %s", t)
	}
	key := t.text
	op := p.next()
	switch op.kind {
	case tokEOF:
		return Requirement{Key: key, Operator: OpExists}, nil
	case tokEq, tokNotEq:
		v := ""
		if p.peek().kind == tokWord {
			v = p.next().text
		}
		o := OpIn
		if op.kind == tokNotEq {
			o = OpNotIn
		}
		return Requirement{Key: key, Operator: o, Values: []string{v}}, p.expectEOF()
	case tokGt, tokLt:
		v := p.next()
		if v.kind != tokWord {
			return Requirement{}, fmt.Errorf("expected an integer after %q, got %s", op.text, v)
		}
		o := OpGt
		if op.kind == tokLt {
			o = OpLt
		}
		return Requirement{Key: key, Operator: o, Values: []string{v.text}}, p.expectEOF()
	case tokWord:
		var o Operator
		switch op.text {
		case "in":
			o = OpIn
		case "notin":
			o = OpNotIn
		default:
			return Requirement{}, fmt.Errorf("unknown operator %q after key %q (want in, notin, =, !=, >, <)", op.text, key)
		}
		values, err := p.list()
		if err != nil {
			return Requirement{}, fmt.Errorf("%s: %w", op.text, err)
		}
		return Requirement{Key: key, Operator: o, Values: values}, p.expectEOF()
	default:
		return Requirement{}, fmt.Errorf("unexpected %s after key %q", op, key)
	}
}

// list reads "(v1,v2,...)". Elements may be empty: "()" is [""] and "(a,)" is [a, ""], so that every list
// String writes reads back the same.
func (p *reqParser) list() ([]string, error) {
	if t := p.next(); t.kind != tokLParen {
		return nil, fmt.Errorf("expected \"(\", got %s", t)
	}
	var values []string
	cur, have := "", false
	for {
		t := p.next()
		switch t.kind {
		case tokWord:
			if have {
				return nil, fmt.Errorf("expected \",\" or \")\" before %s", t)
			}
			cur, have = t.text, true
		case tokComma:
			values = append(values, cur)
			cur, have = "", false
		case tokRParen:
			return append(values, cur), nil
		case tokEOF:
			return nil, fmt.Errorf("missing \")\"")
		default:
			return nil, fmt.Errorf("unexpected %s in value list", t)
		}
	}
}
