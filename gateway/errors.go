package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an error in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

// badRequest is a 400 naming what was wrong: param is the request field
// or header.
func badRequest(param, format string, args ...any) *apiError {
	code := "invalid_request"
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: &param, Code: &code,
		Message: param + ": " + fmt.Sprintf(format, args...)}
}

func notFound(param, format string, args ...any) *apiError {
	code := "not_found"
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: &param, Code: &code,
		Message: fmt.Sprintf(format, args...)}
}

// upstreamFailed is the error of an upstream that could not be reached or
// answered with something that is not an OpenAI error.
func upstreamFailed(status int, format string, args ...any) *apiError {
	code := "upstream_error"
	return &apiError{Status: status, Type: "upstream_error", Code: &code, Message: fmt.Sprintf(format, args...)}
}

func internal(msg string) *apiError {
	code := "server_error"
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: &code, Message: msg}
}

// writeError answers e in OpenAI's error shape.
func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
