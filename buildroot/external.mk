include $(sort $(wildcard $(BR2_EXTERNAL_ROUTERD_PATH)/package/*/*.mk))
