/*
 * curl_dl.c: libcurl loaded at run time (curl_dl.h): only an agent that
 * uses the etcd-v3 backend maps it.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "curl_dl.h"
#include "errbuf.h"

struct curl_dl curl_dl;

/* The symbols to resolve, each with the slot it fills. */
#define CURL_DL_SYM(name, field)	{ name, (void **)&curl_dl.field }
static const struct {
	const char	*name;
	void		**slot;
} curl_dl_syms[] = {
	CURL_DL_SYM("curl_global_init", global_init),
	CURL_DL_SYM("curl_easy_init", easy_init),
	CURL_DL_SYM("curl_easy_setopt", easy_setopt),
	CURL_DL_SYM("curl_easy_getinfo", easy_getinfo),
	CURL_DL_SYM("curl_easy_perform", easy_perform),
	CURL_DL_SYM("curl_easy_cleanup", easy_cleanup),
	CURL_DL_SYM("curl_easy_strerror", easy_strerror),
	CURL_DL_SYM("curl_easy_pause", easy_pause),
	CURL_DL_SYM("curl_slist_append", slist_append),
	CURL_DL_SYM("curl_slist_free_all", slist_free_all),
	CURL_DL_SYM("curl_multi_init", multi_init),
	CURL_DL_SYM("curl_multi_setopt", multi_setopt),
	CURL_DL_SYM("curl_multi_add_handle", multi_add_handle),
	CURL_DL_SYM("curl_multi_remove_handle", multi_remove_handle),
	CURL_DL_SYM("curl_multi_assign", multi_assign),
	CURL_DL_SYM("curl_multi_socket_action", multi_socket_action),
	CURL_DL_SYM("curl_multi_info_read", multi_info_read),
	CURL_DL_SYM("curl_multi_cleanup", multi_cleanup),
};

/* Load libcurl.so.4 and resolve every symbol, once; the library stays. */
int
curl_dl_load(char *err, size_t errlen)
{
	static int loaded;
	void *h;
	size_t i;

	if (loaded)
		return 0;
	if ((h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		errbuf_set(err, errlen, "the etcd-v3 backend needs libcurl "
		    "(Debian package libcurl4): %s", dlerror());
		return -1;
	}
	for (i = 0; i < sizeof(curl_dl_syms) / sizeof(curl_dl_syms[0]); i++)
		if ((*curl_dl_syms[i].slot = dlsym(h, curl_dl_syms[i].name)) ==
		    NULL) {
			errbuf_set(err, errlen, "libcurl.so.4 has no %s",
			    curl_dl_syms[i].name);
			dlclose(h);
			return -1;
		}
	loaded = 1;
	return 0;
}
