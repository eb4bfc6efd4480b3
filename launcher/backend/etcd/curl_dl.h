/*
 * curl_dl.h: libcurl, loaded with dlopen when the etcd-v3 backend starts
 * (curl_dl.c), so that every other job does not pay for mapping libcurl
 * and its ~30 dependent libraries at start-up (several ms and ~6 MB of
 * RSS per agent).  etcd_http.c includes this header instead of calling
 * libcurl's symbols: each curl_* name below is a pointer filled by
 * curl_dl_load().
 */
#ifndef CGRUN_CURL_DL_H
#define CGRUN_CURL_DL_H

#include <stddef.h>

#define CURL_DISABLE_TYPECHECK	1	/* its macros would name the symbols */
#include <curl/curl.h>

struct curl_dl {
	CURLcode	 (*global_init)(long);
	CURL		*(*easy_init)(void);
	CURLcode	 (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode	 (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode	 (*easy_perform)(CURL *);
	void		 (*easy_cleanup)(CURL *);
	const char	*(*easy_strerror)(CURLcode);
	CURLcode	 (*easy_pause)(CURL *, int);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void		 (*slist_free_all)(struct curl_slist *);
	CURLM		*(*multi_init)(void);
	CURLMcode	 (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode	 (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode	 (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode	 (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMcode	 (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg		*(*multi_info_read)(CURLM *, int *);
	CURLMcode	 (*multi_cleanup)(CURLM *);
};

extern struct curl_dl curl_dl;

/* Load libcurl once; -1 with err set when it cannot be loaded. */
int	curl_dl_load(char *err, size_t errlen);

/* curl.h's own argument-count macros give way to the pointers. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt

#define curl_global_init	curl_dl.global_init
#define curl_easy_init		curl_dl.easy_init
#define curl_easy_setopt	curl_dl.easy_setopt
#define curl_easy_getinfo	curl_dl.easy_getinfo
#define curl_easy_perform	curl_dl.easy_perform
#define curl_easy_cleanup	curl_dl.easy_cleanup
#define curl_easy_strerror	curl_dl.easy_strerror
#define curl_easy_pause		curl_dl.easy_pause
#define curl_slist_append	curl_dl.slist_append
#define curl_slist_free_all	curl_dl.slist_free_all
#define curl_multi_init		curl_dl.multi_init
#define curl_multi_setopt	curl_dl.multi_setopt
#define curl_multi_add_handle	curl_dl.multi_add_handle
#define curl_multi_remove_handle curl_dl.multi_remove_handle
#define curl_multi_assign	curl_dl.multi_assign
#define curl_multi_socket_action curl_dl.multi_socket_action
#define curl_multi_info_read	curl_dl.multi_info_read
#define curl_multi_cleanup	curl_dl.multi_cleanup

#endif /* CGRUN_CURL_DL_H */
