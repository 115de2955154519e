/* libsafety_dl_io.so: what dlopen_test loads at run time. Its I/O must be
 * recorded like the program's own: DL_WRITES writes of 100 bytes, an
 * fsync and a close on dl_posix.dat; DL_WRITES fwrites of 50 bytes on
 * dl_stdio.dat between fopen and fclose. 0 on success, else the line that
 * failed (errno set). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int safety_dl_io(int n);

__attribute__((visibility("default"))) int safety_dl_io(int n)
{
	static const char data[100] = "dlopen'd library data";
	int fd = open("dl_posix.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return __LINE__;
	for (int i = 0; i < n; i++)
		if (write(fd, data, 100) != 100)
			return __LINE__;
	if (fsync(fd) != 0 || close(fd) != 0)
		return __LINE__;
	FILE *f = fopen("dl_stdio.dat", "w");
	if (!f)
		return __LINE__;
	for (int i = 0; i < n; i++)
		if (fwrite(data, 1, 50, f) != 50)
			return __LINE__;
	return fclose(f) == 0 ? 0 : __LINE__;
}
