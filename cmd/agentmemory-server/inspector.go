package main

import (
	"log/slog"
	"net/http"

	"github.com/agentmemory/agentmemory/inspector"
	"github.com/agentmemory/agentmemory/memoryservice"
)

// withInspector serves the memory inspector (package inspector) at
// /inspector/ and h everywhere else; off, it is h.
func withInspector(h http.Handler, svc *memoryservice.Service, on bool, logger *slog.Logger) (http.Handler, error) {
	if !on {
		return h, nil
	}
	in, err := inspector.New(inspector.Config{Service: svc, Logger: logger})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(inspector.DefaultPrefix+"/", in)
	mux.Handle(inspector.DefaultPrefix, in)
	mux.Handle("/", h)
	return mux, nil
}
