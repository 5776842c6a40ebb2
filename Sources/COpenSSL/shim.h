#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/sha.h>

/* One-line wrappers for OpenSSL macros, which Swift cannot import. */

static inline long courier_SSL_set_tlsext_host_name(SSL *s, const char *name) {
    return SSL_set_tlsext_host_name(s, name);
}
static inline int courier_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int courier_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline long courier_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline int courier_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}
static inline int courier_SSL_get_negotiated_group(SSL *s) { return (int)SSL_get_negotiated_group(s); }
static inline int courier_SSL_get_peer_signature_type_nid(const SSL *s, int *nid) {
    return SSL_get_peer_signature_type_nid(s, nid);
}
static inline long courier_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline int courier_SSL_get_ex_new_index(void) {
    return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}
static inline void courier_BIO_set_retry_read(BIO *b) { BIO_set_retry_read(b); }
static inline void courier_BIO_clear_retry_flags(BIO *b) { BIO_clear_retry_flags(b); }
static inline void courier_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline long courier_BIO_get_mem_data(BIO *b, char **data) { return BIO_get_mem_data(b, data); }
static inline int courier_BIO_reset(BIO *b) { return (int)BIO_reset(b); }
static inline unsigned long courier_XN_FLAG_ONELINE(void) { return XN_FLAG_ONELINE; }
static inline int courier_SSL_SENT_SHUTDOWN(void) { return SSL_SENT_SHUTDOWN; }
static inline int courier_SSL_RECEIVED_SHUTDOWN(void) { return SSL_RECEIVED_SHUTDOWN; }
static inline long courier_SSL_OP_NO_COMPRESSION(void) { return (long)SSL_OP_NO_COMPRESSION; }
static inline long courier_SSL_CTX_set_options(SSL_CTX *ctx, long options) {
    return (long)SSL_CTX_set_options(ctx, (uint64_t)options);
}
static inline int courier_ERR_GET_REASON(unsigned long e) { return ERR_GET_REASON(e); }
static inline int courier_ERR_GET_LIB(unsigned long e) { return ERR_GET_LIB(e); }
static inline int courier_sk_X509_num(const STACK_OF(X509) *chain) { return sk_X509_num(chain); }
static inline X509 *courier_sk_X509_value(const STACK_OF(X509) *chain, int i) { return sk_X509_value(chain, i); }
static inline int courier_sk_X509_OBJECT_num(const STACK_OF(X509_OBJECT) *objects) { return sk_X509_OBJECT_num(objects); }
static inline X509_OBJECT *courier_sk_X509_OBJECT_value(const STACK_OF(X509_OBJECT) *objects, int i) {
    return sk_X509_OBJECT_value(objects, i);
}
static inline int courier_X509_LOOKUP_add_default_dir(X509_LOOKUP *lookup) {
    return X509_LOOKUP_add_dir(lookup, NULL, X509_FILETYPE_DEFAULT);
}
/* The default CA file (SSL_CERT_FILE, else OpenSSL's), read whole. */
static inline int courier_X509_LOOKUP_load_default_file(X509_LOOKUP *lookup) {
    return X509_LOOKUP_load_file(lookup, NULL, X509_FILETYPE_DEFAULT);
}
