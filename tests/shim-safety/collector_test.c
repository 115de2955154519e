/* collector_test SECONDS PAUSE_US [STOP_FILE]: first writes early.dat
 * (EARLY_WRITES of 100 bytes, closed at once), then writes collector.dat
 * steadily for SECONDS (a pwrite of 100 bytes and an fputs of 20 bytes to
 * collector.txt, then a pause of PAUSE_US), and after them until STOP_FILE
 * exists when one is given (the driver's steps then take as long as they
 * take), whatever happens to the collector meanwhile, checking every
 * return value. Prints what it did: the driver compares it with what a
 * (restarted) sink received. */
#include <fcntl.h>

#include "check.h"

#define REC          100
#define EARLY_WRITES 10
#define LINE         "collector test line\n" /* 20 bytes */

int main(int argc, char **argv)
{
	CHECK(argc == 3 || argc == 4, "usage: collector_test SECONDS PAUSE_US [STOP_FILE]");
	double seconds = atof(argv[1]);
	useconds_t pause = (useconds_t)atol(argv[2]);
	const char *stop = argc == 4 ? argv[3] : NULL;
	double t0 = safety_now();
	int fd = open("early.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open early.dat");
	for (int i = 0; i < EARLY_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(REC), REC);
	CLOSE_OK(fd);
	fd = open("collector.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open collector.dat");
	FILE *f = fopen("collector.txt", "w");
	CHECK(f != NULL, "fopen collector.txt");
	long n = 0;
	while (safety_now() - t0 < seconds || (stop && access(stop, F_OK) != 0)) {
		PWRITE_ALL(fd, safety_pattern(REC), REC, (off_t)(n % 1000) * REC);
		CHECK(fputs(LINE, f) >= 0, "fputs");
		n++;
		if (pause)
			usleep(pause);
	}
	CHECK(fclose(f) == 0, "fclose");
	CLOSE_OK(fd);
	printf("early_writes %d\nearly_bytes %d\nwrites %ld\nbytes %ld\nlines %ld\nline_bytes %ld\n"
	       "seconds %.3f\n",
	       EARLY_WRITES, EARLY_WRITES * REC, n, n * REC, n, n * (long)strlen(LINE),
	       safety_now() - t0);
	return 0;
}
