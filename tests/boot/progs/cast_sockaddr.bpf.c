/* eunomia-bpf's lsm-connect idiom: an LSM hook hands the program a struct sockaddr *, which it reads as
 * the struct sockaddr_in it is. The CO-RE relocations name sockaddr_in's members; the verifier checks
 * each load against the kernel's struct sockaddr, whose sa_data covers the bytes read (a slim BTF that
 * keeps only what CO-RE names loses sa_data, and the load with it: EINVAL). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#define AF_INET 2

__u32 last_addr;
__u16 last_port;

SEC("lsm/socket_connect")
int BPF_PROG(restrict_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	if (ret != 0)
		return ret;
	if (address->sa_family != AF_INET)
		return 0;
	struct sockaddr_in *addr = (struct sockaddr_in *)address;
	last_addr = addr->sin_addr.s_addr;
	last_port = bpf_ntohs(addr->sin_port);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
