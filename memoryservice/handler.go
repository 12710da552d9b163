package memoryservice

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// handle adapts an operation of the API to an http.HandlerFunc: what op
// returns is answered as JSON with status (with any header op set), and
// its error by fail, logged as what. op reads the request and its body
// (decode) and writes nothing else. Config.ObserveRequest is told of each
// request, as what in snake_case.
func handle[T any](s *Service, what string, status int, op func(http.ResponseWriter, *http.Request) (T, error)) http.HandlerFunc {
	name := strings.ReplaceAll(what, " ", "_")
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		v, err := op(w, r)
		code := status
		if err != nil {
			code = s.fail(w, r, what, err)
		} else {
			writeJSON(w, status, v)
		}
		s.observed(r, name, code, time.Since(start))
	}
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body of at most Config.MaxBodyBytes into v,
// refusing unknown trailing data; its errors are 4xx naming the field.
func (s *Service) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			return tooLarge(tooBig.Limit)
		case errors.As(err, &typeErr):
			field := typeErr.Field
			if field == "" {
				field = "body"
			}
			return badRequest(field, "expected %s, got JSON %s", typeErr.Type, typeErr.Value)
		case errors.Is(err, io.EOF):
			return badRequest("body", "a JSON object is required")
		default:
			return badRequest("body", "not valid JSON: %v", err)
		}
	}
	if dec.More() {
		return badRequest("body", "unexpected data after the JSON object")
	}
	return nil
}
