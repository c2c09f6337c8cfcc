/* SPDX-License-Identifier: BSD-3-Clause */
/* The cores a node gives the run (src/core/measure/cores.c), read from planted
 * /sys and /proc trees: CPU lists, cgroup v2 cpu.max and v1
 * cpu.cfs_quota_us/cfs_period_us (the least over the cgroup and its
 * parents, a missing folder passed over), hardware threads per core, and
 * the least of online, affinity and the quota rounded up. The e2e test
 * (tests/e2e/test_oversubscribed.py) makes a real cgroup where it can. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/measure/measure.h"

static char root[256];

/* root/path with its folders made, holding text */
static void
plant(const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    for (char *s = full + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(full, 0755);
        *s = '/';
    }
    FILE *f = fopen(full, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void
fresh_root(void)
{
    char cmd[300];
    if (root[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", root);
    }
    snprintf(root, sizeof root, "/tmp/iok-test-cores-XXXXXX");
    if (!mkdtemp(root))
        exit(1);
}

static int
near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

int
main(void)
{
    CHECK(iok_cpu_list_count("0-3,8-11\n") == 8, "0-3,8-11");
    CHECK(iok_cpu_list_count("0") == 1, "0");
    CHECK(iok_cpu_list_count("0,4") == 2, "0,4");
    CHECK(iok_cpu_list_count("") == -1, "empty");
    CHECK(iok_cpu_list_count("3-1") == -1, "backwards");
    CHECK(iok_cpu_list_count("0-x") == -1, "not a number");

    /* nothing planted: unknown, no quota, one thread per core */
    fresh_root();
    CHECK(iok_cpus_online(root) == -1, "no online file");
    CHECK(iok_cpus_cgroup(root) < 0, "no cgroup file");
    CHECK(iok_cpus_threads_per_core(root) == 1, "no topology");

    plant("/sys/devices/system/cpu/online", "0-15\n");
    plant("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,8\n");
    CHECK(iok_cpus_online(root) == 16, "online %d", iok_cpus_online(root));
    CHECK(iok_cpus_threads_per_core(root) == 2, "threads %d", iok_cpus_threads_per_core(root));

    /* cgroup v2: the leaf's 1.5 CPUs, a parent without a quota */
    plant("/proc/self/cgroup", "0::/job/step\n");
    plant("/sys/fs/cgroup/job/step/cpu.max", "150000 100000\n");
    plant("/sys/fs/cgroup/job/cpu.max", "max 100000\n");
    CHECK(near(iok_cpus_cgroup(root), 1.5), "v2 leaf: %g", iok_cpus_cgroup(root));
    /* a parent's lower quota limits the leaf */
    plant("/sys/fs/cgroup/job/cpu.max", "50000 100000\n");
    CHECK(near(iok_cpus_cgroup(root), 0.5), "v2 parent: %g", iok_cpus_cgroup(root));
    plant("/sys/fs/cgroup/job/cpu.max", "max 100000\n");
    plant("/sys/fs/cgroup/job/step/cpu.max", "max 100000\n");
    CHECK(iok_cpus_cgroup(root) < 0, "v2 max everywhere: %g", iok_cpus_cgroup(root));

    /* cgroup v2 in a container: its hierarchy root is its own cgroup
     * (0::/), the quota at the mount point */
    fresh_root();
    plant("/proc/self/cgroup", "0::/\n");
    plant("/sys/fs/cgroup/cpu.max", "400000 100000\n");
    CHECK(near(iok_cpus_cgroup(root), 4), "v2 container: %g", iok_cpus_cgroup(root));

    /* cgroup v1, cpu and cpuacct mounted together; the leaf has no
     * quota (-1), its parent 2 CPUs; a folder missing on the way */
    fresh_root();
    plant("/proc/self/cgroup", "4:memory:/x\n3:cpu,cpuacct:/slurm/uid_0/job_7\n0::/\n");
    plant("/sys/fs/cgroup/cpu,cpuacct/slurm/uid_0/job_7/cpu.cfs_quota_us", "-1\n");
    plant("/sys/fs/cgroup/cpu,cpuacct/slurm/uid_0/job_7/cpu.cfs_period_us", "100000\n");
    plant("/sys/fs/cgroup/cpu,cpuacct/slurm/cpu.cfs_quota_us", "200000\n");
    plant("/sys/fs/cgroup/cpu,cpuacct/slurm/cpu.cfs_period_us", "100000\n");
    CHECK(near(iok_cpus_cgroup(root), 2), "v1 parent: %g", iok_cpus_cgroup(root));
    /* a controller list that only contains "cpu" as a part (cpuset) is not it */
    fresh_root();
    plant("/proc/self/cgroup", "3:cpuset:/a\n");
    plant("/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "100000\n");
    plant("/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n");
    CHECK(iok_cpus_cgroup(root) < 0, "cpuset is not cpu: %g", iok_cpus_cgroup(root));
    plant("/proc/self/cgroup", "1:cpu:/a\n");
    CHECK(near(iok_cpus_cgroup(root), 1), "v1 cpu: %g", iok_cpus_cgroup(root));

    /* usable: the least, the quota rounded up, at least 1 */
    CHECK(iok_cores_usable(16, 4, -1) == 4, "affinity 4: %d", iok_cores_usable(16, 4, -1));
    CHECK(iok_cores_usable(16, 16, 1.5) == 2, "quota 1.5: %d", iok_cores_usable(16, 16, 1.5));
    CHECK(iok_cores_usable(2, 2, 0.5) == 1, "quota 0.5: %d", iok_cores_usable(2, 2, 0.5));
    CHECK(iok_cores_usable(2, 2, 4) == 2, "quota above: %d", iok_cores_usable(2, 2, 4));
    CHECK(iok_cores_usable(-1, 3, -1) == 3, "online unknown: %d", iok_cores_usable(-1, 3, -1));

    /* the words of the headlines */
    struct iok_node_cores nodes[2] = {{.host = "a", .ranks = 2, .usable_cores = 4},
                                      {.host = "b", .ranks = 4, .usable_cores = 1}};
    struct iok_cores c = {.nnodes = 2, .node = nodes, .oversubscribed = 1, .worst = 1};
    char buf[96];
    CHECK(!strcmp(iok_cores_words(&c, buf, sizeof buf), "oversubscribed (4 ranks on 1 core)"), "%s",
          buf);
    nodes[1].usable_cores = 2;
    CHECK(!strcmp(iok_cores_words(&c, buf, sizeof buf), "oversubscribed (4 ranks on 2 cores)"),
          "%s", buf);
    c.oversubscribed = 0;
    CHECK(!strcmp(iok_cores_words(&c, buf, sizeof buf), ""), "%s", buf);
    CHECK(!strcmp(iok_cores_words(NULL, buf, sizeof buf), ""), "%s", buf);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    return check_summary("test_cores");
}
