// SPDX-License-Identifier: MIT
/*
 * Description: a device buffer shared as a dma-buf. Imported into the
 * file that exported it, or twice into another file, it is the same
 * buffer (one more reference each, freed once per import, the handle
 * closed by the last); another process imports it on its own device file
 * and both see each other's writes; the memory outlives the exporter's
 * buffer while a descriptor or an import holds it.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_helpers.h"

#define LEN 65536

static int child(int fd, const unsigned char *want, const unsigned char *put)
{
	unsigned char *back = malloc(LEN);
	struct nrn_device *dev;
	struct nrn_buffer *b = NULL;

	alarm(20);
	t_check_ret(nrn_device_open(0, &dev), 0);
	t_check_ret(nrn_buffer_import(dev, fd, &b), 0);
	if (!b)
		return T_EXIT_FAIL;
	t_check(nrn_buffer_size(b) >= LEN);
	t_check_ret(nrn_copy_d2h(back, b, 0, LEN), 0);
	t_check(memcmp(back, want, LEN) == 0);
	t_check_ret(nrn_copy_h2d(b, 0, put, LEN), 0);
	nrn_buffer_free(b);
	nrn_device_close(dev);
	free(back);
	return t_exit();
}

int main(void)
{
	struct nrn_device *dev = t_open_device(), *dev2;
	unsigned char *a = malloc(LEN), *c = malloc(LEN), *back = malloc(LEN);
	struct nrn_buffer *buf = t_buffer(dev, LEN), *imp = NULL, *imp2 = NULL;
	int fd = -1, status = 0;
	pid_t pid;

	if (!buf)
		return T_EXIT_FAIL;
	t_fill(a, LEN, 1);
	t_fill(c, LEN, 2);
	t_check_ret(nrn_copy_h2d(buf, 0, a, LEN), 0);
	t_check_ret(nrn_buffer_export(buf, &fd), 0);

	/* Into the exporting file: the buffer itself. */
	t_check_ret(nrn_buffer_import(dev, fd, &imp), 0);
	t_check(imp == buf);
	nrn_buffer_free(imp);
	t_check_ret(nrn_copy_d2h(back, buf, 0, LEN), 0);
	t_check(memcmp(back, a, LEN) == 0);

	/* Twice into another file: one buffer; the first free keeps it. */
	t_check_ret(nrn_device_open(0, &dev2), 0);
	t_check_ret(nrn_buffer_import(dev2, fd, &imp), 0);
	t_check_ret(nrn_buffer_import(dev2, fd, &imp2), 0);
	t_check(imp && imp == imp2);
	nrn_buffer_free(imp2);
	memset(back, 0, LEN);
	t_check_ret(nrn_copy_d2h(back, imp, 0, LEN), 0);
	t_check(memcmp(back, a, LEN) == 0);
	nrn_buffer_free(imp);
	/* All gone from dev2: a new import makes a new handle that works. */
	t_check_ret(nrn_buffer_import(dev2, fd, &imp), 0);
	t_check_ret(nrn_copy_d2h(back, imp, 0, LEN), 0);
	t_check(memcmp(back, a, LEN) == 0);

	/*
	 * Another process: the exporter's buffer is freed first; the
	 * descriptor and dev2's import keep the memory.
	 */
	nrn_buffer_free(buf);
	pid = fork();
	if (pid == 0)
		_exit(child(fd, a, c));
	t_check(pid > 0 && waitpid(pid, &status, 0) == pid);
	t_check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	memset(back, 0, LEN);
	t_check_ret(nrn_copy_d2h(back, imp, 0, LEN), 0);
	t_check(memcmp(back, c, LEN) == 0);

	nrn_buffer_free(imp);
	close(fd);
	t_check_ret(nrn_buffer_import(dev2, -1, &imp), -EINVAL);
	nrn_device_close(dev2);
	nrn_device_close(dev);
	free(a);
	free(c);
	free(back);
	return t_exit();
}
