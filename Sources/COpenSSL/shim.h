#include <openssl/ssl.h>
#include <openssl/err.h>
static inline long courier_SSL_set_tlsext_host_name(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
