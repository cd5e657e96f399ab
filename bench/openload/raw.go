package main

import (
	"bufio"
	"errors"
	"fmt"

	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// rawClient writes a request made once, as bytes, on one keep-alive connection and reads the
// answer with as little work as HTTP/1.1 allows: the status line, Content-Length or chunked
// framing, and the body discarded. It redials after an error or a "Connection: close".
type rawClient struct {
	addr    string
	req     []byte
	timeout time.Duration

	conn net.Conn
	br   *bufio.Reader
}

var _ client = (*rawClient)(nil)

// rawRequest is the request's bytes: the request line, Host, the headers given, no body.
func rawRequest(method string, u *url.URL, hdrs []string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), u.Host)
	for _, h := range hdrs {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("header %q: want 'Name: value'", h)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", strings.TrimSpace(name), strings.TrimSpace(value))
	}
	b.WriteString("\r\n")
	return []byte(b.String()), nil
}

func (c *rawClient) do() (int, error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return 0, fmt.Errorf("dial: %w", err)
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 32<<10)
	}
	c.conn.SetDeadline(time.Now().Add(c.timeout))
	status, keep, err := c.roundTrip()
	if err != nil || !keep {
		c.conn.Close()
		c.conn = nil
	}
	return status, err
}

func (c *rawClient) roundTrip() (status int, keepAlive bool, err error) {
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, false, fmt.Errorf("write: %w", err)
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, fmt.Errorf("status line: %w", err)
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || string(line[:5]) != "HTTP/" {
		return 0, false, fmt.Errorf("status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, false, fmt.Errorf("status line %q", line)
	}
	length, chunked, keepAlive := int64(-1), false, true
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return status, false, fmt.Errorf("header: %w", err)
		}
		if len(line) <= 2 { // the blank line
			break
		}
		name, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Content-Length"):
			if length, err = strconv.ParseInt(value, 10, 64); err != nil {
				return status, false, fmt.Errorf("Content-Length %q", value)
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			chunked = strings.EqualFold(value, "chunked")
		case strings.EqualFold(name, "Connection"):
			keepAlive = !strings.EqualFold(value, "close")
		}
	}
	switch {
	case status == 204 || status == 304:
	case chunked:
		err = c.discardChunks()
	case length >= 0:
		_, err = c.br.Discard(int(length))
	default:
		return status, false, errors.New("an answer without Content-Length or chunks")
	}
	if err != nil {
		return status, false, fmt.Errorf("body: %w", err)
	}
	return status, keepAlive, nil
}

func (c *rawClient) discardChunks() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil {
			return fmt.Errorf("chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, then the blank line
				line, err := c.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err := c.br.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}
