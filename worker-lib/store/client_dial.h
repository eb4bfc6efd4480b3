/*
 * client_dial.h: the store client's connection set-up (libcgrun): resolve,
 * connect, the torch 2.x handshake, retries with jittered backoff.
 * Internal header: not installed.
 */
#ifndef CGRUN_CLIENT_DIAL_H
#define CGRUN_CLIENT_DIAL_H

/* Connect to host:port with retries until timeout_ms; a connected,
 * non-blocking fd past VALIDATE + PING, or -1 with errno and err (a
 * CGRUN_ERRLEN buffer, may be NULL) filled. */
int	client_dial(const char *host, int port, int timeout_ms, char *err);

#endif /* CGRUN_CLIENT_DIAL_H */
