package client

import (
	"errors"
	"testing"
)

func TestParseEvent(t *testing.T) {
	ok := []string{
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","data":{}}`,
		`{ "protocol_version" : 1 , "request_id" : null , "seq" : 7 , "type" : "x" , "data" : null , "new" : [1] }`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","run_id":"r","session_id":"s","data":"anything"}`,
	}
	for _, line := range ok {
		if _, err := parseEvent([]byte(line)); err != nil {
			t.Errorf("parseEvent(%s): %v", line, err)
		}
	}
	mismatch := []string{
		`{"request_id":"a","seq":1,"type":"x","data":{}}`,
		`{"protocol_version":2,"request_id":"a","seq":1,"type":"x","data":{}}`,
		`{"protocol_version":1.0,"request_id":"a","seq":1,"type":"x","data":{}}`,
		`{"protocol_version":null,"request_id":"a","seq":1,"type":"x","data":{}}`,
	}
	for _, line := range mismatch {
		var e *ProtocolMismatchError
		if _, err := parseEvent([]byte(line)); !errors.As(err, &e) || !errors.Is(err, ErrProtocolViolation) {
			t.Errorf("parseEvent(%s): %v, want *ProtocolMismatchError", line, err)
		}
	}
	malformed := []string{
		``,
		`   `,
		`null`,
		`"text"`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","data":{}} {}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","data":{}`,
		"{\"protocol_version\":1,\"request_id\":\"\xff\",\"seq\":1,\"type\":\"x\",\"data\":{}}",
		`{"protocol_version":1,"seq":1,"type":"x","data":{}}`,
		`{"protocol_version":1,"request_id":5,"seq":1,"type":"x","data":{}}`,
		`{"protocol_version":1,"request_id":"a","type":"x","data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":"1","type":"x","data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":1.5,"type":"x","data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"","data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x"}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","run_id":7,"data":{}}`,
		`{"protocol_version":1,"request_id":"a","seq":1,"type":"x","session_id":null,"data":{}}`,
		`{"protocol_version":1,"protocol_version":1,"request_id":"a","seq":1,"type":"x","data":{}}`,
	}
	for _, line := range malformed {
		var e *MalformedEventError
		if _, err := parseEvent([]byte(line)); !errors.As(err, &e) || !errors.Is(err, ErrProtocolViolation) {
			t.Errorf("parseEvent(%q): %v, want *MalformedEventError", line, err)
		}
	}
}
