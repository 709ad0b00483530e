/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in /init that never reports: the guest must be destroyed at the
 * daemon's timeout and the job must end as an infra error. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	fprintf(stderr, "sleeper: sleeping forever\n");
	for (;;)
		pause();
}
