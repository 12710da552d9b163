package responses

import "errors"

// ErrInvalid is wrapped by the errors of a request or an upstream answer
// that is malformed: not JSON, a field of the wrong type, a missing
// required field. The message names what was wrong. A gateway answers a
// client's malformed request with HTTP 400, and a malformed upstream
// answer with 502.
var ErrInvalid = errors.New("responses: invalid")

// ErrUnsupported is wrapped by the errors of a request that asks for what
// Chat Completions cannot do: a hosted tool (web_search, file_search…), a
// stored prompt, a background run, an input item only OpenAI's servers
// can resolve. The message names the tool, field or item type. A gateway
// answers it with HTTP 400.
var ErrUnsupported = errors.New("responses: not supported over Chat Completions")

// ErrUpstream is wrapped by the errors of an upstream answer that is an
// error ({"error": {"message": …}}), in a body or in a stream.
var ErrUpstream = errors.New("responses: upstream error")

// ErrStreamCut is returned by Finish when the upstream's stream ended
// before its answer did (no finish_reason came): the client was sent
// response.failed, and no turn should be recorded.
var ErrStreamCut = errors.New("responses: upstream stream ended before its answer finished")

// ErrStreamDone is returned by a Stream's methods called after its last
// event was written.
var ErrStreamDone = errors.New("responses: stream already finished")
