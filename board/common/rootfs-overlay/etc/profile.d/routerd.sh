# Login hint on the console: what to type first.
case $- in
*i*)
	echo "routerd: 'routerctl status' shows the supervisor, 'routerctl doctor' its checks,"
	echo "         'routerctl passwd' sets the web UI password, 'routerctl --help' the rest."
	;;
esac
