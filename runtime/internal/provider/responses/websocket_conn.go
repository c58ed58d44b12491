package responses

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The socket's library is github.com/gorilla/websocket: framing, masking,
// fragments, control frames (a ping is answered with a pong while a
// message is read), close frames and the read limit are its own. Its
// Dialer opens TCP and TLS connections itself, though, and the transport
// must reach the server the way an HTTP call does: through the Provider's
// http.Client (its transport, proxy and TLS settings, and the nofollow rule
// that never follows a redirect, so the key and the custom headers go to
// the configured origin only). clientConn is the seam: the Dialer "dials"
// it, writes its handshake request into it and reads the answer from it;
// clientConn sends that request through the http.Client and hands the
// Dialer the server's real answer, then the upgraded connection. The
// Dialer generates the key and checks the answer (101, Upgrade,
// Connection, Sec-WebSocket-Accept) as it would on a connection of its
// own.

// errHandshakeRefused ends the Dialer's handshake when the server answered
// with anything but 101 Switching Protocols: the answer is clientConn.resp.
var errHandshakeRefused = errors.New("the server refused the WebSocket handshake")

// errHandshakeFailed answers the Dialer's reads and writes after a failed
// handshake.
var errHandshakeFailed = errors.New("the WebSocket handshake failed")

// clientConn is the net.Conn a gorilla Dialer gets from dialSocket. Its
// first writes are the Dialer's handshake request; its first read sends
// that request through the client and yields the answer's status line and
// header; after a 101 it reads and writes the upgraded connection. The
// handshake runs on one goroutine (the Dialer's); head and rwc do not
// change after it, so the socket's reader and writer may then use the
// connection at once.
//
// Deadlines are not supported (the Set*Deadline methods do nothing): the
// transport ends a blocked read or write by closing the socket (the idle
// watch, a call's context, writeText's context).
type clientConn struct {
	ctx    context.Context // the handshake's
	client *http.Client
	url    string // the endpoint, http:// or https://

	req  bytes.Buffer   // the handshake request as the Dialer wrote it
	sent bool           // the request went (or failed to go) to the client
	head *bytes.Reader  // the answer's status line and header, for the Dialer
	resp *http.Response // the server's answer
	err  error          // why the handshake request got no answer

	rwc io.ReadWriteCloser // the upgraded connection, after a 101
	// readAhead: the Dialer read from rwc during the handshake, so its
	// buffer may hold the first frames (frameReader cannot take over).
	readAhead bool
	opened    bool // the handshake is over: reads are the socket's
	closeOnce sync.Once
	closeErr  error
}

// dialSocket opens a WebSocket to endpoint (http:// or https://; the
// Dialer is given wsURL of it) with header through client. The returned
// clientConn tells what the HTTP request met: its resp is the server's
// answer when there was one (a refusal is an answer other than 101), its
// err the failure of a request that got no answer.
func dialSocket(ctx context.Context, client *http.Client, endpoint string, header http.Header) (*websocket.Conn, *clientConn, error) {
	if client.Timeout != 0 {
		// net/http hides a 101's connection behind a body of its own when
		// the client has a Timeout (which would bound the socket's whole
		// life); the caller's ctx bounds the handshake instead.
		c := *client
		c.Timeout = 0
		client = &c
	}
	cc := &clientConn{ctx: ctx, client: client, url: endpoint}
	netDial := func(context.Context, string, string) (net.Conn, error) { return cc, nil }
	d := websocket.Dialer{
		NetDialContext:    netDial,
		NetDialTLSContext: netDial, // TLS is the client's, under clientConn
		// A request message up to 32 KiB goes as one frame.
		WriteBufferSize: 32 << 10,
		// Compression stays off: it is not offered, and clientConn refuses
		// an answer that turns it on anyway.
		EnableCompression: false,
	}
	conn, _, err := d.DialContext(ctx, wsURL(endpoint), header)
	if err != nil {
		_ = cc.Close()
		return nil, cc, err
	}
	cc.opened = true
	return conn, cc, nil
}

// errExtension refuses a 101 answer that names an extension or a
// subprotocol: none was offered (RFC 6455 §4.1: the client must fail the
// connection), and permessage-deflate would let a small frame inflate past
// the read limit.
var errExtension = errors.New("the server's WebSocket handshake answer turns on an extension or subprotocol the client did not offer")

// roundTrip sends the Dialer's handshake request through the client and
// prepares the answer for the Dialer.
func (c *clientConn) roundTrip() error {
	wreq, err := http.ReadRequest(bufio.NewReader(&c.req))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return err
	}
	for k, vs := range wreq.Header {
		req.Header[k] = vs
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.err = err
		return err
	}
	c.resp = resp
	if resp.StatusCode != http.StatusSwitchingProtocols {
		// Never read: a refusal's body may be a redirect page.
		_ = resp.Body.Close()
		return errHandshakeRefused
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		_ = resp.Body.Close()
		// A RoundTripper that does not hand the connection over.
		return errors.New("the HTTP client's answer to the WebSocket handshake has no connection to hand over")
	}
	c.rwc = rwc
	if resp.Header.Get("Sec-WebSocket-Extensions") != "" || resp.Header.Get("Sec-WebSocket-Protocol") != "" {
		return errExtension
	}
	// c.head set means the socket is open: Read and Write go to rwc once
	// the Dialer has read it.
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	if err := resp.Header.Write(&head); err != nil {
		return err
	}
	head.WriteString("\r\n")
	c.head = bytes.NewReader(head.Bytes())
	return nil
}

func (c *clientConn) Read(b []byte) (int, error) {
	if c.head == nil {
		if c.sent {
			return 0, errHandshakeFailed
		}
		c.sent = true
		if err := c.roundTrip(); err != nil {
			return 0, err
		}
	}
	if c.head.Len() > 0 {
		return c.head.Read(b)
	}
	if !c.opened {
		c.readAhead = true
	}
	return c.rwc.Read(b)
}

// Write collects the handshake request until the first Read, then writes
// the upgraded connection.
func (c *clientConn) Write(b []byte) (int, error) {
	if c.head != nil {
		return c.rwc.Write(b)
	}
	if c.sent {
		return 0, errHandshakeFailed
	}
	return c.req.Write(b)
}

// Close closes the upgraded connection, once.
func (c *clientConn) Close() error {
	c.closeOnce.Do(func() {
		if c.rwc != nil {
			c.closeErr = c.rwc.Close()
		}
	})
	return c.closeErr
}

// socketAddr is the address clientConn reports: the endpoint's URL.
type socketAddr string

func (a socketAddr) Network() string { return "websocket" }
func (a socketAddr) String() string  { return string(a) }

func (c *clientConn) LocalAddr() net.Addr              { return socketAddr("") }
func (c *clientConn) RemoteAddr() net.Addr             { return socketAddr(c.url) }
func (c *clientConn) SetDeadline(time.Time) error      { return nil }
func (c *clientConn) SetReadDeadline(time.Time) error  { return nil }
func (c *clientConn) SetWriteDeadline(time.Time) error { return nil }
