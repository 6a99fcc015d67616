// Command cel-reference evaluates CEL expressions exactly as a Kubernetes 1.34 API server
// does: the environment is k8s.io/apiserver/pkg/cel/environment's base environment for
// compatibility version 1.34 with strict cost (every library, option, AST validator and the
// per-call cost limit Kubernetes enables), extended with the variables each input declares.
//
// It is the reference of policysched's differential test (tests/cel/kubernetes/). Protocol:
// one JSON object per line on stdin,
//
//	{"expr": "x + 1", "vars": {"x": {"type": "int", "value": {"int": "41"}}}}
//
// and one JSON object per line on stdout, in the same order:
//
//	{"value": <typed value>} | {"compile_error": "<message>"} | {"runtime_error": "<message>"}
//
// Declared types: int uint double bool string bytes null_type timestamp duration dyn,
// list(T), map(K, V). Typed values (input and output): {"int": "<decimal>"},
// {"uint": "<decimal>"}, {"double": "<Go %g, NaN, +Inf, -Inf>"}, {"string": s},
// {"bytes": "<base64>"}, {"bool": b}, {"null": null}, {"list": [v...]},
// {"map": [[k, v]...]} (entries sorted by their JSON encoding), {"timestamp": "<RFC 3339,
// UTC, nanoseconds>"}, {"duration": "<nanoseconds>"}, {"type": "<type name>"},
// {"optional": null | v}, and for library objects (Quantity, URL, Semver, IP, CIDR,
// Format) {"object": {"type": "<type name>", "string": "<canonical string>"}}.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// input is one line of stdin.
type input struct {
	Expr string              `json:"expr"`
	Vars map[string]variable `json:"vars"`
}

// variable is a declared variable with its value for this evaluation.
type variable struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// output is one line of stdout: exactly one field is set.
type output struct {
	Value        any     `json:"value,omitempty"`
	CompileError *string `json:"compile_error,omitempty"`
	RuntimeError *string `json:"runtime_error,omitempty"`
}

var base = environment.MustBaseEnvSet(version.MajorMinor(1, 34), true)

// envs caches one extended environment per set of declarations.
var envs = map[string]*cel.Env{}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		if err := enc.Encode(evaluateLine(line)); err != nil {
			fmt.Fprintln(os.Stderr, "cel-reference:", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "cel-reference:", err)
		os.Exit(2)
	}
}

func failure(kind string, msg string) output {
	if kind == "compile" {
		return output{CompileError: &msg}
	}
	return output{RuntimeError: &msg}
}

// evaluateLine compiles and evaluates one input; a malformed input is reported as a
// runtime error prefixed with "reference:" (never a crash, so the streams stay aligned).
func evaluateLine(line string) (result output) {
	defer func() {
		if r := recover(); r != nil {
			result = failure("runtime", fmt.Sprintf("panic: %v", r))
		}
	}()
	var req input
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		return failure("runtime", "reference: bad input: "+err.Error())
	}
	env, err := environmentFor(req.Vars)
	if err != nil {
		return failure("runtime", "reference: "+err.Error())
	}
	activation := map[string]any{}
	for name, v := range req.Vars {
		val, err := decodeValue(v.Value)
		if err != nil {
			return failure("runtime", fmt.Sprintf("reference: variable %s: %v", name, err))
		}
		activation[name] = val
	}
	ast, issues := env.Compile(req.Expr)
	if issues != nil && issues.Err() != nil {
		return failure("compile", issues.Err().Error())
	}
	// Kubernetes builds the program when the expression is written (admission policies,
	// CRD rules): constant folding errors (int(double('inf'))) reject it there, with
	// admission's message.
	prg, err := env.Program(ast)
	if err != nil {
		return failure("compile", "program instantiation failed: "+err.Error())
	}
	val, _, err := prg.Eval(activation)
	if err != nil {
		return failure("runtime", err.Error())
	}
	encoded, err := encodeValue(val)
	if err != nil {
		return failure("runtime", "reference: "+err.Error())
	}
	return output{Value: encoded}
}

// environmentFor extends the Kubernetes base environment with the declared variables.
func environmentFor(vars map[string]variable) (*cel.Env, error) {
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	var key strings.Builder
	for _, name := range names {
		key.WriteString(name + ":" + vars[name].Type + ";")
	}
	if env, ok := envs[key.String()]; ok {
		return env, nil
	}
	opts := make([]cel.EnvOption, 0, len(names))
	for _, name := range names {
		t, rest, err := parseType(vars[name].Type)
		if err != nil || strings.TrimSpace(rest) != "" {
			return nil, fmt.Errorf("variable %s: bad type %q", name, vars[name].Type)
		}
		opts = append(opts, cel.Variable(name, t))
	}
	set, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
	})
	if err != nil {
		return nil, err
	}
	env, err := set.Env(environment.NewExpressions)
	if err != nil {
		return nil, err
	}
	envs[key.String()] = env
	return env, nil
}

// parseType reads one declared type from the front of s and returns the rest.
func parseType(s string) (*cel.Type, string, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexAny(s, "(,)")
	if end < 0 {
		end = len(s)
	}
	name, rest := strings.TrimSpace(s[:end]), s[end:]
	scalars := map[string]*cel.Type{
		"int": cel.IntType, "uint": cel.UintType, "double": cel.DoubleType,
		"bool": cel.BoolType, "string": cel.StringType, "bytes": cel.BytesType,
		"null_type": cel.NullType, "timestamp": cel.TimestampType,
		"duration": cel.DurationType, "dyn": cel.DynType,
	}
	if t, ok := scalars[name]; ok {
		return t, rest, nil
	}
	if name != "list" && name != "map" || !strings.HasPrefix(rest, "(") {
		return nil, "", fmt.Errorf("unknown type %q", name)
	}
	first, rest, err := parseType(rest[1:])
	if err != nil {
		return nil, "", err
	}
	if name == "list" {
		if !strings.HasPrefix(rest, ")") {
			return nil, "", fmt.Errorf("list type: ')' expected")
		}
		return cel.ListType(first), rest[1:], nil
	}
	if !strings.HasPrefix(rest, ",") {
		return nil, "", fmt.Errorf("map type: ',' expected")
	}
	second, rest, err := parseType(rest[1:])
	if err != nil {
		return nil, "", err
	}
	if !strings.HasPrefix(rest, ")") {
		return nil, "", fmt.Errorf("map type: ')' expected")
	}
	return cel.MapType(first, second), rest[1:], nil
}

// decodeValue turns a typed JSON value into a CEL value.
func decodeValue(raw json.RawMessage) (ref.Val, error) {
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 1 {
		return nil, fmt.Errorf("not a typed value: %s", raw)
	}
	for tag, body := range tagged {
		var text string
		switch tag {
		case "int", "uint", "double", "string", "bytes", "timestamp", "duration":
			if err := json.Unmarshal(body, &text); err != nil {
				return nil, fmt.Errorf("%s: %v", tag, err)
			}
		}
		switch tag {
		case "int":
			i, err := strconv.ParseInt(text, 10, 64)
			return types.Int(i), err
		case "uint":
			u, err := strconv.ParseUint(text, 10, 64)
			return types.Uint(u), err
		case "double":
			f, err := strconv.ParseFloat(text, 64)
			return types.Double(f), err
		case "string":
			return types.String(text), nil
		case "bytes":
			b, err := base64.StdEncoding.DecodeString(text)
			return types.Bytes(b), err
		case "bool":
			var b bool
			err := json.Unmarshal(body, &b)
			return types.Bool(b), err
		case "null":
			return types.NullValue, nil
		case "timestamp":
			t, err := time.Parse(time.RFC3339Nano, text)
			return types.Timestamp{Time: t}, err
		case "duration":
			ns, err := strconv.ParseInt(text, 10, 64)
			return types.Duration{Duration: time.Duration(ns)}, err
		case "list":
			var items []json.RawMessage
			if err := json.Unmarshal(body, &items); err != nil {
				return nil, err
			}
			vals := make([]ref.Val, len(items))
			for i, item := range items {
				v, err := decodeValue(item)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
		case "map":
			var entries [][2]json.RawMessage
			if err := json.Unmarshal(body, &entries); err != nil {
				return nil, err
			}
			m := make(map[ref.Val]ref.Val, len(entries))
			for _, entry := range entries {
				k, err := decodeValue(entry[0])
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(entry[1])
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			return types.NewRefValMap(types.DefaultTypeAdapter, m), nil
		}
		return nil, fmt.Errorf("unknown value tag %q", tag)
	}
	return nil, fmt.Errorf("empty value")
}

type object struct {
	Type   string `json:"type"`
	String string `json:"string"`
}

// encodeValue turns a CEL result into its typed JSON value.
func encodeValue(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Int:
		return map[string]string{"int": strconv.FormatInt(int64(x), 10)}, nil
	case types.Uint:
		return map[string]string{"uint": strconv.FormatUint(uint64(x), 10)}, nil
	case types.Double:
		return map[string]string{"double": strconv.FormatFloat(float64(x), 'g', -1, 64)}, nil
	case types.String:
		return map[string]string{"string": string(x)}, nil
	case types.Bytes:
		return map[string]string{"bytes": base64.StdEncoding.EncodeToString(x)}, nil
	case types.Bool:
		return map[string]bool{"bool": bool(x)}, nil
	case types.Null:
		return map[string]any{"null": nil}, nil
	case types.Timestamp:
		return map[string]string{"timestamp": x.Time.UTC().Format(time.RFC3339Nano)}, nil
	case types.Duration:
		return map[string]string{"duration": strconv.FormatInt(int64(x.Duration), 10)}, nil
	case *types.Optional:
		if !x.HasValue() {
			return map[string]any{"optional": nil}, nil
		}
		inner, err := encodeValue(x.GetValue())
		return map[string]any{"optional": inner}, err
	case ref.Type:
		return map[string]string{"type": x.TypeName()}, nil
	case apiservercel.Quantity:
		return map[string]object{"object": {x.Type().TypeName(), x.Quantity.String()}}, nil
	case apiservercel.URL:
		return map[string]object{"object": {x.Type().TypeName(), x.URL.String()}}, nil
	case apiservercel.Semver:
		return map[string]object{"object": {x.Type().TypeName(), x.Version.String()}}, nil
	case apiservercel.IP:
		return map[string]object{"object": {x.Type().TypeName(), x.Addr.String()}}, nil
	case apiservercel.CIDR:
		return map[string]object{"object": {x.Type().TypeName(), x.Prefix.String()}}, nil
	case apiservercel.Format:
		return map[string]object{"object": {x.Type().TypeName(), x.Name}}, nil
	case traits.Mapper:
		return encodeMap(x)
	case traits.Lister:
		n := int(x.Size().(types.Int))
		items := make([]any, n)
		for i := 0; i < n; i++ {
			item, err := encodeValue(x.Get(types.Int(i)))
			if err != nil {
				return nil, err
			}
			items[i] = item
		}
		return map[string]any{"list": items}, nil
	}
	return map[string]object{"object": {v.Type().TypeName(), fmt.Sprint(v.Value())}}, nil
}

func encodeMap(m traits.Mapper) (any, error) {
	type entry struct {
		key  string
		pair [2]any
	}
	var entries []entry
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		key, err := encodeValue(k)
		if err != nil {
			return nil, err
		}
		value, err := encodeValue(m.Get(k))
		if err != nil {
			return nil, err
		}
		sortKey, _ := json.Marshal(key)
		entries = append(entries, entry{string(sortKey), [2]any{key, value}})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	pairs := make([][2]any, len(entries))
	for i, e := range entries {
		pairs[i] = e.pair
	}
	return map[string]any{"map": pairs}, nil
}
