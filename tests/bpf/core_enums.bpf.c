/* CO-RE enumerator relocations: enumval_exists and enumval_value, for 32- and 64-bit enums.
 *
 * Covered: a plain enum, a signed one (negative values), an anonymous enum reached through a typedef
 * (the relocation's root is the typedef), an enum64 with values above 32 bits (the value lands in an
 * ldimm64), an enum flavor and an enumerator flavor (ENF_B___v2 matches the target's ENF_B), and
 * an enum the targets turn into an enum64 and back (the two kinds are interchangeable).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

enum enums_named {
	EN_A,
	EN_B = 10,
	EN_C,
};

enum enums_signed {
	ES_NEG = -5,
	ES_POS = 7,
};

typedef enum {
	TE_X,
	TE_Y,
	TE_Z,
} enums_typedef_t;

enum enums_wide {
	EW_SMALL = 1,
	EW_BIG = 0xffffffff00000000ULL,
	EW_HUGE = 0x8000000000000000ULL,
};

enum enums_flavor___local {
	ENF_A,
	ENF_B___v2,
};

/* 32-bit here, 64-bit in the moved target (and the other way round for enums_wide's values). */
enum enums_grows {
	EG_ONE = 1,
	EG_TWO = 2,
};

unsigned int exists_out[12];
unsigned long long value_out[12];

SEC("raw_tp/sys_enter")
int enums_values(void *ctx)
{
	exists_out[0] = bpf_core_enum_value_exists(enum enums_named, EN_A);
	exists_out[1] = bpf_core_enum_value_exists(enum enums_named, EN_B);
	exists_out[2] = bpf_core_enum_value_exists(enum enums_named, EN_C);
	exists_out[3] = bpf_core_enum_value_exists(enum enums_signed, ES_NEG);
	exists_out[4] = bpf_core_enum_value_exists(enum enums_signed, ES_POS);
	exists_out[5] = bpf_core_enum_value_exists(enums_typedef_t, TE_Y);
	exists_out[6] = bpf_core_enum_value_exists(enums_typedef_t, TE_Z);
	exists_out[7] = bpf_core_enum_value_exists(enum enums_wide, EW_BIG);
	exists_out[8] = bpf_core_enum_value_exists(enum enums_wide, EW_HUGE);
	exists_out[9] = bpf_core_enum_value_exists(enum enums_flavor___local, ENF_B___v2);
	exists_out[10] = bpf_core_enum_value_exists(enum enums_grows, EG_ONE);
	exists_out[11] = bpf_core_enum_value_exists(enum enums_grows, EG_TWO);

	value_out[0] = bpf_core_enum_value(enum enums_named, EN_A);
	value_out[1] = bpf_core_enum_value(enum enums_named, EN_B);
	value_out[2] = bpf_core_enum_value(enum enums_named, EN_C);
	value_out[3] = bpf_core_enum_value(enum enums_signed, ES_NEG);
	value_out[4] = bpf_core_enum_value(enum enums_signed, ES_POS);
	value_out[5] = bpf_core_enum_value(enums_typedef_t, TE_Y);
	value_out[6] = bpf_core_enum_value(enums_typedef_t, TE_Z);
	value_out[7] = bpf_core_enum_value(enum enums_wide, EW_BIG);
	value_out[8] = bpf_core_enum_value(enum enums_wide, EW_HUGE);
	value_out[9] = bpf_core_enum_value(enum enums_flavor___local, ENF_B___v2);
	value_out[10] = bpf_core_enum_value(enum enums_grows, EG_ONE);
	value_out[11] = bpf_core_enum_value(enum enums_grows, EG_TWO);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
