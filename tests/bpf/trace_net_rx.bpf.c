/* Packets received against the running kernel: the net:netif_receive_skb tracepoint, whose record
 * (trace_event_raw_net_dev_template) gives the sk_buff. sk_buff -> len, data_len, protocol, dev ->
 * ifindex, name; counted per device. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct rx_stats {
	unsigned long long packets;
	unsigned long long bytes;
	unsigned long long nonlinear_bytes;
	unsigned short last_protocol;
	char name[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, int);
	__type(value, struct rx_stats);
} rx SEC(".maps");

SEC("tp/net/netif_receive_skb")
int trace_net_rx(struct trace_event_raw_net_dev_template *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)BPF_CORE_READ(ctx, skbaddr);
	int ifindex = BPF_CORE_READ(skb, dev, ifindex);
	struct rx_stats zero = {}, *stats;

	stats = bpf_map_lookup_elem(&rx, &ifindex);
	if (!stats) {
		BPF_CORE_READ_STR_INTO(&zero.name, skb, dev, name);
		bpf_map_update_elem(&rx, &ifindex, &zero, BPF_NOEXIST);
		stats = bpf_map_lookup_elem(&rx, &ifindex);
		if (!stats)
			return 0;
	}
	__sync_fetch_and_add(&stats->packets, 1);
	__sync_fetch_and_add(&stats->bytes, BPF_CORE_READ(skb, len));
	__sync_fetch_and_add(&stats->nonlinear_bytes, BPF_CORE_READ(skb, data_len));
	stats->last_protocol = BPF_CORE_READ(skb, protocol);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
