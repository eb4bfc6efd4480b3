# A listening socket whose accept queue is full: connects to it hang (SYNs
# dropped).  Prints its port, then holds it for 120 s.
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
cs = []
for i in range(4):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    cs.append(c)
time.sleep(0.3)
print(port, flush=True)
time.sleep(120)
