module octet.dev/host

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/qmuntal/stateless v1.7.2 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
