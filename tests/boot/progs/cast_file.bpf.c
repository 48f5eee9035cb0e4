/* Pointer chains through the structs a file leads to, as tracing tools walk them: a struct embedded in
 * another (file->f_path) and the pointers it holds (dentry, its name), a file's inode and its super
 * block, and the socket behind a file that a helper hands out typed (bpf_sock_from_file), each load
 * checked against the kernel's layout of the struct the previous one pointed to. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

unsigned long last_magic;
unsigned long last_ino;
unsigned int last_name_len;
unsigned short last_family;

SEC("fentry/vfs_read")
int BPF_PROG(on_read, struct file *file, char *buf, size_t count, loff_t *pos)
{
	struct dentry *dentry = file->f_path.dentry;

	last_name_len = dentry->d_name.len;
	last_ino = file->f_inode->i_ino;
	last_magic = file->f_inode->i_sb->s_magic;

	struct socket *sock = bpf_sock_from_file(file);
	if (sock && sock->sk)
		last_family = sock->sk->__sk_common.skc_family;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
