/* CO-RE bitfield relocations: every field read through the two libbpf macros.
 *
 * BPF_CORE_READ_BITFIELD_PROBED reads the storage with bpf_probe_read_kernel: byte_off (ALU add),
 * byte_sz (the read's size, an ALU mov), lshift_u64, rshift_u64 and signed. BPF_CORE_READ_BITFIELD
 * reads directly: the same five kinds, byte_sz feeding a switch over the load size.
 *
 * The fields are the kernel selftests' set (core_reloc_bitfields): bitfields of 1, 2, 7, 4 (signed)
 * and 20 (signed) bits and two plain ints, which the macros read like bitfields that fill their type.
 * The targets move bitfields across storage units, turn a bitfield into a plain int and back, grow
 * them, change signedness, and (errors target, see core_errors) make one straddle 8 bytes.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct bitfields {
	unsigned int ub1 : 1;
	unsigned int ub2 : 2;
	unsigned int ub7 : 7;
	int sb4 : 4;
	int sb20 : 20;
	unsigned int u32;
	int s32;
} __attribute__((preserve_access_index));

unsigned long long probed_out[7];
unsigned long long direct_out[7];

SEC("raw_tp/sys_enter")
int bitfields_probed(struct bpf_raw_tracepoint_args *ctx)
{
	struct bitfields *bf = (void *)ctx->args[0];

	probed_out[0] = BPF_CORE_READ_BITFIELD_PROBED(bf, ub1);
	probed_out[1] = BPF_CORE_READ_BITFIELD_PROBED(bf, ub2);
	probed_out[2] = BPF_CORE_READ_BITFIELD_PROBED(bf, ub7);
	probed_out[3] = BPF_CORE_READ_BITFIELD_PROBED(bf, sb4);
	probed_out[4] = BPF_CORE_READ_BITFIELD_PROBED(bf, sb20);
	probed_out[5] = BPF_CORE_READ_BITFIELD_PROBED(bf, u32);
	probed_out[6] = BPF_CORE_READ_BITFIELD_PROBED(bf, s32);
	return 0;
}

SEC("raw_tp/sys_exit")
int bitfields_direct(struct bpf_raw_tracepoint_args *ctx)
{
	struct bitfields *bf = (void *)ctx->args[0];

	direct_out[0] = BPF_CORE_READ_BITFIELD(bf, ub1);
	direct_out[1] = BPF_CORE_READ_BITFIELD(bf, ub2);
	direct_out[2] = BPF_CORE_READ_BITFIELD(bf, ub7);
	direct_out[3] = BPF_CORE_READ_BITFIELD(bf, sb4);
	direct_out[4] = BPF_CORE_READ_BITFIELD(bf, sb20);
	direct_out[5] = BPF_CORE_READ_BITFIELD(bf, u32);
	direct_out[6] = BPF_CORE_READ_BITFIELD(bf, s32);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
