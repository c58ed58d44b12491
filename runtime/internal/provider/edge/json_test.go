package edge

import (
	"testing"

	"github.com/go-json-experiment/json"
)

func TestLenientTypes(t *testing.T) {
	var v struct {
		F FlexString `json:"f"`
		T TextOnly   `json:"t"`
		A ArgText    `json:"a"`
	}
	for _, tc := range []struct {
		in      string
		f, x, a string
	}{
		{`{"f":"s","t":"s","a":"{\"k\":1}"}`, "s", "s", `{"k":1}`},
		{`{"f":null,"t":null,"a":null}`, "", "", ""},
		{`{"f":{"x": [1, 2]},"t":{"text":"no"},"a":{"k":1}}`, `{"x": [1, 2]}`, "", `{"k":1}`},
		{`{"f":12,"t":12,"a":[]}`, "12", "", "[]"},
		{`{"f":"a","f":"b"}`, "b", "", ""},
	} {
		v.F, v.T, v.A = "", "", ""
		if err := json.Unmarshal([]byte(tc.in), &v, Lenient); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if string(v.F) != tc.f || string(v.T) != tc.x || string(v.A) != tc.a {
			t.Errorf("%s: got %q %q %q, want %q %q %q", tc.in, v.F, v.T, v.A, tc.f, tc.x, tc.a)
		}
	}
}

// anthropicFields is the Messages mode's precedence, for the tests.
func anthropicFields(env *ErrorEnvelope) (code, msg string) {
	if e := env.Error; e != nil {
		return e.TypeOrCode(), string(e.Message)
	}
	return string(env.Code), string(env.Message)
}

func TestParseErrorBody(t *testing.T) {
	for _, tc := range []struct {
		body      string
		fields    ErrorFields
		code, msg string
	}{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, OpenAIErrorFields, "c", "m"},
		{`{"error":{"message":"m","type":"t","code":null}}`, OpenAIErrorFields, "t", "m"},
		{`{"error":{"message":"m","type":"t","code":"c"}}`, anthropicFields, "t", "m"},
		{`{"error":{"message":"m","code":429}}`, anthropicFields, "429", "m"},
		{`{"error":"bare string"}`, OpenAIErrorFields, "", "bare string"},
		{`{"message":"top","type":"tt"}`, OpenAIErrorFields, "tt", "top"},
		{` [{"error":{"message":"in array","code":"a"}}] `, OpenAIErrorFields, "a", "in array"},
		{`[]`, OpenAIErrorFields, "", "[]"},
		{`{"other":1}`, OpenAIErrorFields, "", `{"other":1}`},
		{"upstream timed out\n", OpenAIErrorFields, "", "upstream timed out"},
		{``, OpenAIErrorFields, "", ""},
	} {
		code, msg := parseErrorBody([]byte(tc.body), tc.fields)
		if code != tc.code || msg != tc.msg {
			t.Errorf("parseErrorBody(%s) = %q, %q; want %q, %q", tc.body, code, msg, tc.code, tc.msg)
		}
	}
}

func TestParseErrorEnvelope(t *testing.T) {
	for _, tc := range []struct {
		body      string
		ok        bool
		code, msg string
	}{
		{`{"error":{"message":"busy","code":"overloaded"}}`, true, "overloaded", "busy"},
		{`{"error":"plain"}`, true, "", "plain"},
		{`{"message":"top-level only"}`, false, "", ""},
		{`{"choices":[]}`, false, "", ""},
		{`not json`, false, "", ""},
	} {
		code, msg, ok := parseErrorEnvelope([]byte(tc.body), OpenAIErrorFields)
		if ok != tc.ok || code != tc.code || msg != tc.msg {
			t.Errorf("parseErrorEnvelope(%s) = %q, %q, %v", tc.body, code, msg, ok)
		}
	}
}
