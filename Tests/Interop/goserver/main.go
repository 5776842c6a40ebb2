// The interop site on Go's standard library alone (net/http, crypto/tls), as a Go service would
// serve it: launch.py builds and starts it with one JSON argument (html, certs, http, https, mtls,
// closing, close_after, fields).
//
// http.FileServer serves the files (its own Range, If-Range, Last-Modified and 304; no ETag),
// a handler gzips /gzip/, and /upload and /blob/SIZE answer as Tests/Servers/stream_server.py
// does. TLS serves both test certificates, chosen by SNI. The `closing` listener ends every
// `close_after`-th exchange of a connection with Connection: close, which net/http obeys.
package main

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

type settings struct {
	HTML       string      `json:"html"`
	Certs      string      `json:"certs"`
	HTTP       int         `json:"http"`
	HTTPS      int         `json:"https"`
	MTLS       int         `json:"mtls"`
	Closing    int         `json:"closing"`
	CloseAfter int64       `json:"close_after"`
	Fields     [][2]string `json:"fields"`
}

// blobBlock is stream_server.py's block i of seed "0": its SHA-256 digest repeated to 64 KiB.
func blobBlock(i int) []byte {
	digest := sha256.Sum256([]byte(fmt.Sprintf("0:%d", i)))
	block := make([]byte, 0, 1<<16)
	for len(block) < 1<<16 {
		block = append(block, digest[:]...)
	}
	return block[:1<<16]
}

type countingConn struct {
	net.Conn
	exchanges int64
}

type connKey struct{}

func site(s settings) http.Handler {
	var blocks [256][]byte
	for i := range blocks {
		blocks[i] = blobBlock(i)
	}
	files := http.FileServer(http.Dir(s.HTML))
	mux := http.NewServeMux()
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		digest := sha256.New()
		n, err := io.Copy(digest, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		chunked := len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"length": n, "sha256": hex.EncodeToString(digest.Sum(nil)),
			"chunked": chunked, "expect": r.Header.Get("Expect")})
	})
	mux.HandleFunc("/blob/", func(w http.ResponseWriter, r *http.Request) {
		size, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/blob/"))
		if err != nil || size < 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		flusher, _ := w.(http.Flusher)
		for position := 0; position < size; {
			offset := position & (1<<16 - 1)
			take := min(1<<16-offset, size-position)
			w.Write(blocks[(position>>16)%256][offset : offset+take])
			position += take
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
	mux.HandleFunc("/bighead", func(w http.ResponseWriter, r *http.Request) {
		for _, field := range s.Fields {
			w.Header().Set(field[0], field[1])
		}
		http.ServeFile(w, r, filepath.Join(s.HTML, "bighead"))
	})
	mux.HandleFunc("/gzip/", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			files.ServeHTTP(w, r)
			return
		}
		body, err := os.ReadFile(filepath.Join(s.HTML, filepath.Clean(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		compressor := gzip.NewWriter(w)
		compressor.Write(body)
		compressor.Close()
	})
	mux.Handle("/", files)
	return mux
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func serve(server *http.Server, port int, config *tls.Config) {
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		log.Fatal(err)
	}
	if config != nil {
		// ServeTLS (not Serve on a TLS listener) also offers h2 by ALPN, as a Go deployment does.
		server.TLSConfig = config
		go server.ServeTLS(listener, "", "")
		return
	}
	go server.Serve(listener)
}

func main() {
	var s settings
	if err := json.Unmarshal([]byte(os.Args[1]), &s); err != nil {
		log.Fatal(err)
	}
	handler := site(s)
	pair := func(cert, key string) tls.Certificate {
		c, err := tls.LoadX509KeyPair(filepath.Join(s.Certs, cert), filepath.Join(s.Certs, key))
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	certificates := []tls.Certificate{pair("server-chain.pem", "server.key"), pair("other-chain.pem", "other.key")}
	secure := &tls.Config{Certificates: certificates, MinVersion: tls.VersionTLS12}
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(s.Certs, "ca.pem"))
	if err != nil {
		log.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	mutual := secure.Clone()
	mutual.ClientAuth = tls.RequireAndVerifyClientCert
	mutual.ClientCAs = pool

	serve(&http.Server{Handler: handler}, s.HTTP, nil)
	serve(&http.Server{Handler: handler}, s.HTTPS, secure)
	serve(&http.Server{Handler: handler}, s.MTLS, mutual)
	closing := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn := r.Context().Value(connKey{}).(*countingConn)
			if atomic.AddInt64(&conn.exchanges, 1)%s.CloseAfter == 0 {
				w.Header().Set("Connection", "close")
			}
			handler.ServeHTTP(w, r)
		}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &countingConn{Conn: c})
		},
	}
	serve(closing, s.Closing, nil)
	select {}
}
