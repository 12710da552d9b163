package memoryservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// apiError is an error in the Memory Store API's shape:
// {"error": {"code", "message", "param", "type"}}.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
	Type    string `json:"type,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

// badRequest is a 400 naming the field param.
func badRequest(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "invalid_request", Type: "invalid_request_error",
		Param: param, Message: param + ": " + fmt.Sprintf(format, args...)}
}

func notFound(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: "not_found", Type: "invalid_request_error",
		Param: param, Message: fmt.Sprintf(format, args...)}
}

func conflict(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusConflict, Code: "conflict", Type: "invalid_request_error",
		Param: param, Message: fmt.Sprintf(format, args...)}
}

func unauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Code: "unauthorized", Type: "authentication_error", Message: msg}
}

func forbidden(name string) *apiError {
	return &apiError{Status: http.StatusForbidden, Code: "forbidden", Type: "permission_error", Param: "name",
		Message: fmt.Sprintf("this API key may not reach memory store %q", name)}
}

func internal(msg string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Code: "server_error", Type: "server_error", Message: msg}
}

func unavailable(msg string) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable", Type: "server_error", Message: msg}
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers err in the API's error shape: an *apiError as it is,
// anything else as a 500 whose message names no internals.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = internal("internal error; see the server log")
	}
	writeJSON(w, ae.Status, map[string]any{"error": ae})
}
