package memoryservice

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentmemory/agentmemory/store"
)

// apiError is an error in the Memory Store API's shape:
// {"error": {"code", "message", "param", "type"}}.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
	Type    string `json:"type,omitempty"`
	// RetryAfter, when positive, is sent as the Retry-After header (in
	// seconds): the request can be repeated then.
	RetryAfter int `json:"-"`
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

// tooLarge is the error of a body over the server's limit of limit bytes.
func tooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "request_too_large", Type: "invalid_request_error",
		Param: "body", Message: "body: larger than the server's limit of " + strconv.FormatInt(limit, 10) + " bytes"}
}

// errorBody is the body of an error answer.
type errorBody struct {
	Error *apiError `json:"error"`
}

// fail answers err in the API's error shape: an *apiError as it is, a
// store's ErrInvalid as a 400 naming the body, anything else as a 500
// whose message names no internals, logged with what the request was
// doing. It returns the status answered.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, what string, err error) int {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrInvalid):
		ae = badRequest("body", "%v", err)
	default:
		s.log.ErrorContext(r.Context(), "memoryservice: "+what, "err", truncate(err.Error(), maxLogField))
		ae = internal("internal error; see the server log")
	}
	writeError(w, ae)
	return ae.Status
}

// writeError answers ae in the API's error shape.
func writeError(w http.ResponseWriter, ae *apiError) {
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	writeJSON(w, ae.Status, errorBody{Error: ae})
}
