/* nn_app_test: a program that uses nanomsg itself (linked to it), as the
 * shim does. Its sockets must work under the shim: nanomsg's workers are
 * shared by both, so the shim's sender keeps the application's descriptor
 * table then (pmpi-shim/guard.c). Sends MESSAGES messages over a PAIR
 * socket pair (ipc:// in the current directory) and back, writes each to
 * echo.dat, and prints "messages N". */
#include <fcntl.h>
#include <nanomsg/nn.h>
#include <nanomsg/pair.h>

#include "check.h"

#define MESSAGES 200

int main(void)
{
	int a = nn_socket(AF_SP, NN_PAIR), b = nn_socket(AF_SP, NN_PAIR);
	CHECK(a >= 0 && b >= 0, "nn_socket: %s", nn_strerror(nn_errno()));
	int ms = 5000;
	CHECK(nn_setsockopt(b, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms) == 0, "RCVTIMEO");
	CHECK(nn_setsockopt(a, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms) == 0, "RCVTIMEO");
	CHECK(nn_bind(a, "ipc://pair.ipc") >= 0, "nn_bind: %s", nn_strerror(nn_errno()));
	CHECK(nn_connect(b, "ipc://pair.ipc") >= 0, "nn_connect: %s", nn_strerror(nn_errno()));
	int fd = open("echo.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open echo.dat");
	for (int i = 0; i < MESSAGES; i++) {
		char msg[32], got[32];
		int len = snprintf(msg, sizeof msg, "message %04d\n", i);
		CHECK(nn_send(a, msg, (size_t)len, 0) == len, "nn_send: %s",
		      nn_strerror(nn_errno()));
		CHECK(nn_recv(b, got, sizeof got, 0) == len, "nn_recv: %s",
		      nn_strerror(nn_errno()));
		CHECK(nn_send(b, got, (size_t)len, 0) == len, "nn_send back");
		CHECK(nn_recv(a, got, sizeof got, 0) == len && memcmp(got, msg, len) == 0, "echo");
		WRITE_ALL(fd, got, (size_t)len);
	}
	CLOSE_OK(fd);
	CHECK(nn_close(b) == 0 && nn_close(a) == 0, "nn_close");
	printf("messages %d\n", MESSAGES);
	return 0;
}
