"""A file server on loopback for the fetch tests: serves a directory with
Range support (206), logs every request as "<path> <range or ->" to a file,
cuts the first response for any file named in CUT_ONCE after half its
bytes (the connection closes mid-body), as a flaky network would, and for a
file named as stall:NAME sends half its bytes and then nothing, the
connection held open, as a hung mirror would; a file named as gzip:NAME is
served with "Content-Encoding: gzip" (as web servers often label .tar.gz
files), its bytes unchanged; a file named as nolength:NAME is served
without a Content-Length, its end being the connection's (HTTP/1.0).

usage: range_server.py ROOT LOG PORT_FILE [CUT_ONCE_NAME | stall:NAME | gzip:NAME | nolength:NAME ...]
Writes the port it listens on to PORT_FILE once ready."""
import http.server, os, sys, time

root, log, port_file = sys.argv[1], sys.argv[2], sys.argv[3]
stall = {a[len("stall:"):] for a in sys.argv[4:] if a.startswith("stall:")}
gzip = {a[len("gzip:"):] for a in sys.argv[4:] if a.startswith("gzip:")}
nolength = {a[len("nolength:"):] for a in sys.argv[4:] if a.startswith("nolength:")}
cut = {a for a in sys.argv[4:] if ":" not in a}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        rng = self.headers.get("Range")
        with open(log, "a") as f:
            f.write(f"{self.path} {rng or '-'}\n")
        path = os.path.join(root, self.path.lstrip("/"))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        start = int(rng.split("=")[1].split("-")[0]) if rng else 0
        if start >= len(data) and rng:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(data)}")
            self.end_headers()
            return
        body = data[start:]
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        name = os.path.basename(path)
        if name not in nolength:
            self.send_header("Content-Length", str(len(body)))
        if name in gzip:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        if name in stall:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(120)
            return
        if name in cut:
            cut.discard(name)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a client that stops reading (one refusing an oversized body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
