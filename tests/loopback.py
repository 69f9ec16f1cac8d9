"""What the kernel says is listening: servers the suite starts must listen on 127.0.0.1 only."""


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on `port`, from the kernel's own tables."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


LOOPBACK_V4 = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
